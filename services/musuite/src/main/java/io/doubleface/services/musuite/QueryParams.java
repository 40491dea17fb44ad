package io.doubleface.services.musuite;

import io.doubleface.api.BadRequestException;
import io.doubleface.api.HttpRequestView;
import java.util.Set;

/** Helpers of the μSuite services' HTTP bindings. Stateless. */
public final class QueryParams {

    private QueryParams() {}

    /**
     * Rejects a request naming a parameter not in {@code allowed} (a typo should not silently
     * become a default).
     *
     * @param request the request
     * @param allowed the parameters the route takes
     * @throws BadRequestException naming the first unknown parameter and the allowed ones
     */
    public static void requireOnly(HttpRequestView request, String... allowed) throws BadRequestException {
        Set<String> ok = Set.of(allowed);
        for (String name : request.query().keySet()) {
            if (!ok.contains(name)) {
                throw new BadRequestException("unknown parameter: " + abbreviate(name) + " (expected: "
                        + String.join(", ", allowed) + ")");
            }
        }
    }

    /**
     * {@return {@code s}, cut to 40 characters and an ellipsis if longer (for error messages)}
     *
     * @param s any string
     */
    public static String abbreviate(String s) {
        return s.length() <= 40 ? s : s.substring(0, 40) + "…";
    }
}
