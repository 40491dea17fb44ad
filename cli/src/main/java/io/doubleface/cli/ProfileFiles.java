package io.doubleface.cli;

import io.doubleface.tune.Profile;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** Where the load adapter's default profile comes from: the working directory, else the jar. */
final class ProfileFiles {

    /** The default profile, relative to the working directory and inside the jar: {@value}. */
    static final String DEFAULT = "profiles/ycsb-kv.json";

    private ProfileFiles() {}

    /** {@link #DEFAULT} in the working directory if it is a file there, else {@code null}. */
    static Path defaultProfile() {
        Path p = Path.of(DEFAULT);
        return Files.isRegularFile(p) ? p.toAbsolutePath() : null;
    }

    /**
     * The profile shipped in the jar ({@code profiles/ycsb-kv.json} of the repository), or
     * {@code null} if this build has none.
     *
     * @throws IllegalArgumentException if it is not a valid profile
     */
    static Profile shipped() throws IOException {
        try (InputStream in = ProfileFiles.class.getResourceAsStream("/" + DEFAULT)) {
            if (in == null) {
                return null;
            }
            return Profile.parse(new String(in.readAllBytes(), StandardCharsets.UTF_8), "the jar's " + DEFAULT);
        }
    }
}
