package io.doubleface.services.ycsb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.model.Configuration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * μTune's eight threading models (and DoubleFace with and without busy-poll) answer byte-for-byte
 * like the reference, and switching among them — prepared up front — under concurrent load loses
 * no request and creates or destroys no thread.
 */
class TaxonomySwitchTest {

    static final List<String> TAXONOMY = List.of(
            "sib", "sip-1n", "sdb-1n-4w", "sdp-1n-4w", "aib-1r", "aip-1n-2r", "adb-1n-2w-2r", "adp-1n-2w-1r",
            "doubleface", "doubleface-poll");
    static final int SWITCHES = 60;
    static final int PER_SWITCH = 25;

    @Test
    void everyTaxonomyConfigurationAnswersExactlyAndSwitchingCreatesNoThread() throws Exception {
        try (TestCluster cluster = TestCluster.start(20, "doubleface")) {
            List<Configuration> prepared = cluster.server.internals().engine()
                    .prepare(TAXONOMY.stream().map(Configuration::parse).toList());
            assertEquals(TAXONOMY, prepared.stream().map(Configuration::name).toList(), "canonical names");
            long threadsBefore = AdaptiveSwitchingTest.serverThreads();

            AtomicLong sent = new AtomicLong();
            AtomicLong answered = new AtomicLong();
            ConcurrentLinkedQueue<String> errors = new ConcurrentLinkedQueue<>();
            int[] done = {0};
            long[] mark = {0};
            // the "until" condition drives the switching: the next configuration after every PER_SWITCH answers
            AdaptiveSwitchingTest.runUntil(cluster, 4, 0, sent, answered, errors, () -> {
                if (answered.get() - mark[0] < PER_SWITCH) {
                    return false;
                }
                if (done[0] == SWITCHES) {
                    return true;
                }
                cluster.server.switchTo(TAXONOMY.get(done[0]++ % TAXONOMY.size()));
                mark[0] = answered.get();
                return false;
            });
            assertTrue(errors.isEmpty(), "client errors: " + errors);
            assertEquals(sent.get(), answered.get());
            Map<String, Object> stats = cluster.stats();
            assertEquals(sent.get(), JsonDoc.path(stats, "requests", "ok").asLong(), "all ok");
            assertEquals(SWITCHES, JsonDoc.path(stats, "switches").asLong());
            assertEquals(threadsBefore, AdaptiveSwitchingTest.serverThreads(),
                    "threads after " + SWITCHES + " switches among prepared configurations");
        }
    }
}
