package io.doubleface.cli;

import io.doubleface.tune.Profile;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Where the load adapter's default profile of a service comes from: {@code profiles/<file>} in
 * the working directory, else the same path inside the jar (every {@code profiles/*.json} of the
 * repository is shipped). The YCSB service's is {@value #DEFAULT}; another service's is
 * {@code profiles/<service>.json} ({@code doubleface train --service S} writes it).
 */
final class ProfileFiles {

    /** The YCSB service's default profile, relative to the working directory and inside the jar: {@value}. */
    static final String DEFAULT = "profiles/ycsb-kv.json";

    private ProfileFiles() {}

    /** {@return the default profile path of {@code service}: {@value #DEFAULT} for ycsb, else profiles/SERVICE.json} */
    static String defaultFor(String service) {
        return service.equals("ycsb") ? DEFAULT : "profiles/" + service + ".json";
    }

    /** {@link #DEFAULT} in the working directory if it is a file there, else {@code null}. */
    static Path defaultProfile() {
        return defaultProfile("ycsb");
    }

    /** The default profile of {@code service} in the working directory if it is a file there, else {@code null}. */
    static Path defaultProfile(String service) {
        Path p = Path.of(defaultFor(service));
        return Files.isRegularFile(p) ? p.toAbsolutePath() : null;
    }

    /**
     * The profile of {@code service} shipped in the jar, or {@code null} if this build has none.
     *
     * @throws IllegalArgumentException if it is not a valid profile
     */
    static Profile shipped(String service) throws IOException {
        String name = defaultFor(service);
        try (InputStream in = ProfileFiles.class.getResourceAsStream("/" + name)) {
            if (in == null) {
                return null;
            }
            return Profile.parse(new String(in.readAllBytes(), StandardCharsets.UTF_8), "the jar's " + name);
        }
    }
}
