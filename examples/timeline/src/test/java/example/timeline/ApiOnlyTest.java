package example.timeline;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.doubleface.testing.ApiBoundary;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The example is written on doubleface's public API only: its code uses no framework internal. */
class ApiOnlyTest {

    @Test
    void usesNoFrameworkInternal() {
        List<String> found = ApiBoundary.internalDependencies(Path.of("target", "classes"));
        assertEquals(List.of(), found, String.join("\n", found));
    }
}
