package io.doubleface.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.api.FanoutPlan;
import io.doubleface.internal.engine.FanoutEngine;
import io.doubleface.server.FanoutServer;
import io.doubleface.sched.ReplyScheduler;
import io.doubleface.testing.ApiBoundary;
import io.doubleface.tune.LoadAdapter;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The framework keeps the API boundary (docs/api.md, "Stability"): every package is API or internal,
 * and no API signature names a type that is not API.
 */
class ApiBoundaryTest {

    @Test
    void noApiSignatureNamesAnInternalType() {
        List<String> found = ApiBoundary.violations(Path.of("target", "classes"));
        assertEquals(List.of(), found, String.join("\n", found));
    }

    @Test
    void theApiPackagesAreJapicmpsIncludes() {
        List<String> includes = ApiBoundary.apiIncludes();
        assertTrue(includes.containsAll(List.of("io.doubleface.api", "io.doubleface.server", "io.doubleface.driver",
                "io.doubleface.model", "io.doubleface.tune", "io.doubleface.sched")), includes.toString());
        assertTrue(includes.stream().noneMatch(i -> i.contains("internal")), includes.toString());
    }

    @Test
    void internalPackagesAndMarkedTypesAreNotApi() {
        assertTrue(ApiBoundary.isInternal(FanoutEngine.class));
        assertTrue(ApiBoundary.isInternal(LoadAdapter.class));
        assertTrue(ApiBoundary.isInternal(LoadAdapter.SwitchEvent.class), "a nested type of a marked type");
        assertTrue(ApiBoundary.isInternal(ReplyScheduler.class));
        assertTrue(!ApiBoundary.isInternal(FanoutPlan.class) && !ApiBoundary.isInternal(FanoutServer.class));
    }

    @Test
    void aLeakIsReported() {
        List<String> found = ApiBoundary.violations(Path.of("target", "test-classes"));
        assertTrue(found.contains("io.doubleface.api.BoundaryLeakFixture.engine returns io.doubleface.internal.engine.FanoutEngine, which is not API"),
                String.join("\n", found));
        assertTrue(found.stream().noneMatch(l -> l.contains("BoundaryLeakFixture.marked")), "a member marked @Internal is not API");
    }
}
