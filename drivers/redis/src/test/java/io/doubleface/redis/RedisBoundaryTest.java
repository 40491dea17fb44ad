package io.doubleface.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.doubleface.testing.ApiBoundary;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The driver keeps the API boundary (docs/api.md, "Stability"). */
class RedisBoundaryTest {

    @Test
    void theDriverUsesNoFrameworkInternal() {
        List<String> found = ApiBoundary.internalDependencies(Path.of("target", "classes"));
        assertEquals(List.of(), found, String.join("\n", found));
    }

    @Test
    void itsPublicSignaturesNameOnlyApiTypes() {
        List<String> found = ApiBoundary.violations(Path.of("target", "classes"));
        assertEquals(List.of(), found, String.join("\n", found));
    }
}
