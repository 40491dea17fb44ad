package io.doubleface.api;

import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import java.util.List;
import java.util.Map;

/**
 * An HTTP request as a {@link HttpBinding} sees it: method, path, the route's path variables, the
 * query, headers and the whole body (at most the server's body limit). Valid only during
 * {@link HttpBinding#decode}: keep values, not the view or its buffers. Not thread-safe.
 *
 * <p>The typed accessors throw {@link BadRequestException} with a reason that names the parameter
 * and what was expected, so a binding can pass them straight through as the {@code 400} answer.
 */
public interface HttpRequestView {

    /** {@return the request method} */
    HttpMethod method();

    /** {@return the decoded path, without the query string, e.g. {@code /users/42/timeline}} */
    String path();

    /**
     * The value of path variable {@code name} of the route's pattern (e.g. {@code {user}} in
     * {@code /users/{user}/timeline}).
     *
     * @param name the variable's name, without braces
     * @return the segment of the decoded path that the variable matched; never {@code null} or empty
     * @throws IllegalStateException if the route's pattern has no such variable (a programming
     *     error: the request is answered {@code 500}, not {@code 400})
     */
    String pathParam(String name);

    /**
     * Path variable {@code name} as a number.
     *
     * @param name the variable's name, without braces
     * @return the variable's value
     * @throws BadRequestException if it is not a decimal {@code long}
     */
    default long pathLong(String name) throws BadRequestException {
        String v = pathParam(name);
        try {
            return Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw new BadRequestException(name + ": '" + abbreviate(v) + "' (expected: a number)");
        }
    }

    /**
     * The query parameters, decoded, in order of appearance (empty if none).
     *
     * @return the values of each parameter name, in order of appearance; a name given without
     *     {@code =} has an empty value
     */
    Map<String, List<String>> query();

    /**
     * The single value of query parameter {@code name}, or {@code null} if absent.
     *
     * @param name the parameter's name
     * @return the decoded value (empty for {@code ?name} or {@code ?name=}), or {@code null} if absent
     * @throws BadRequestException if it is given more than once
     */
    default String queryParam(String name) throws BadRequestException {
        List<String> v = query().get(name);
        if (v == null) {
            return null;
        }
        if (v.size() != 1) {
            throw new BadRequestException(name + ": given " + v.size() + " times (expected: once)");
        }
        return v.get(0);
    }

    /**
     * Query parameter {@code name} as a number in {@code [min, max]}, or {@code dflt} if absent.
     *
     * @param name the parameter's name
     * @param dflt the value if the parameter is absent (returned as is, not checked against the range)
     * @param min the smallest value accepted
     * @param max the largest value accepted
     * @return the parameter's value, or {@code dflt}
     * @throws BadRequestException if it is not a number in range, or given more than once
     */
    default long queryLong(String name, long dflt, long min, long max) throws BadRequestException {
        String s = queryParam(name);
        if (s == null) {
            return dflt;
        }
        long v;
        try {
            v = Long.parseLong(s);
        } catch (NumberFormatException e) {
            throw new BadRequestException(name + ": '" + abbreviate(s) + "' (expected: " + min + ".." + max + ")");
        }
        if (v < min || v > max) {
            throw new BadRequestException(name + ": " + v + " (expected: " + min + ".." + max + ")");
        }
        return v;
    }

    /**
     * Query parameter {@code name} as an {@code int} in {@code [min, max]}, or {@code dflt} if absent:
     * {@link #queryLong} for the common case.
     *
     * @param name the parameter's name
     * @param dflt the value if the parameter is absent (returned as is, not checked against the range)
     * @param min the smallest value accepted
     * @param max the largest value accepted
     * @return the parameter's value, or {@code dflt}
     * @throws BadRequestException if it is not a number in range, or given more than once
     */
    default int queryInt(String name, int dflt, int min, int max) throws BadRequestException {
        return (int) queryLong(name, dflt, min, max);
    }

    /**
     * Query parameter {@code name} as a list: its single value split at {@code separator}, e.g.
     * {@code ?terms=3,17,42} with {@code ','}. Empty items are refused.
     *
     * @param name the parameter's name
     * @param separator the character between items
     * @param maxItems the most items accepted
     * @return the items in order, or {@code null} if the parameter is absent
     * @throws BadRequestException if it is given more than once, has an empty item or more than
     *     {@code maxItems} items
     */
    default List<String> queryList(String name, char separator, int maxItems) throws BadRequestException {
        String s = queryParam(name);
        if (s == null) {
            return null;
        }
        List<String> items = new java.util.ArrayList<>();
        int from = 0;
        while (true) {
            int to = s.indexOf(separator, from);
            String item = to < 0 ? s.substring(from) : s.substring(from, to);
            if (item.isEmpty()) {
                throw new BadRequestException(name + ": empty item in '" + abbreviate(s) + "' (expected: items "
                        + "separated by '" + separator + "')");
            }
            if (items.size() == maxItems) {
                throw new BadRequestException(name + ": more than " + maxItems + " items");
            }
            items.add(item);
            if (to < 0) {
                return items;
            }
            from = to + 1;
        }
    }

    /** {@return the request headers} */
    HttpHeaders headers();

    /** {@return the body (read-only, empty if none); valid only during {@link HttpBinding#decode}} */
    ByteBuf body();

    /**
     * The body decoded by {@code codec}.
     *
     * @param <T> the decoded type
     * @param codec the codec to decode the body with
     * @return the codec's result
     * @throws BadRequestException if the body is empty or the codec fails (with its reason)
     */
    <T> T body(BodyCodec<T> codec) throws BadRequestException;

    private static String abbreviate(String s) {
        return s.length() <= 40 ? s : s.substring(0, 40) + "…";
    }
}
