package io.doubleface.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** {@code demo} end to end, in-process: every default configuration, every response checked. */
class DemoCommandTest {

    @Test
    void demoRunsEveryDefaultConfigurationAndAllAnswersAreRight() {
        CliRun r = new CliRun();
        int code = r.run("demo", "--requests", "200", "--warmup", "50");
        assertEquals(0, code, () -> "stdout:\n" + r.out() + "\nstderr:\n" + r.err());
        String out = r.out();
        for (String config : DemoCommand.DEFAULT_CONFIGS.split(",")) {
            assertTrue(out.matches("(?s).*\\n" + config + " +200 +0 +0 .*"), () -> config + " row missing or with errors:\n" + out);
        }
        assertTrue(out.contains("ok: all 200 responses per configuration were 200 and byte-identical across the 5"), out);
    }

    @Test
    void demoTakesItsWorkloadOptions() {
        CliRun r = new CliRun();
        int code = r.run("demo", "--requests", "40", "--warmup", "0", "--concurrency", "3", "--fanout", "4",
                "--size", "large", "--configs", "doubleface-fifo,type2b-fixed-2", "--embedded-shards", "4",
                "--records", "30", "--io-threads", "1");
        assertEquals(0, code, () -> "stdout:\n" + r.out() + "\nstderr:\n" + r.err());
        assertTrue(r.out().contains("40 x GET /query?fanout=4&size=large"), r.out());
        assertTrue(r.out().matches("(?s).*\\ndoubleface-fifo +40 +0 +0 .*"), r.out());
        assertTrue(r.out().matches("(?s).*\\ntype2b-fixed-2 +40 +0 +0 .*"), r.out());
    }
}
