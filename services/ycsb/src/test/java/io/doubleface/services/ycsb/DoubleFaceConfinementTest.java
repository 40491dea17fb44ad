package io.doubleface.services.ycsb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.api.FanoutPlan;
import io.doubleface.api.Replies;
import io.doubleface.api.FanoutService;
import io.netty.buffer.ByteBuf;
import io.netty.channel.EventLoop;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Under DoubleFace a request never changes thread: plan, every onReply and merge run on one
 * thread, and that thread is one of the server's shared I/O loops. For contrast, under Type-2a and
 * Type-2b the replies are processed off the I/O loops — so the recording below can tell.
 */
class DoubleFaceConfinementTest {

    static final int SHARDS = 20;
    static final int REQUESTS = 500;
    static final int IN_FLIGHT = 32;

    /** Where each step of one request ran. */
    static final class Trace {
        final Thread plan;
        final List<Thread> replies = Collections.synchronizedList(new ArrayList<>());
        final List<Thread> merges = Collections.synchronizedList(new ArrayList<>());

        Trace(Thread plan) {
            this.plan = plan;
        }
    }

    /** The YCSB service, recording the thread of every step per request (requests by identity). */
    static final class Recording implements FanoutService<YcsbQuery, byte[], YcsbService.Result> {
        final YcsbService inner;
        final Map<YcsbQuery, Trace> traces = Collections.synchronizedMap(new IdentityHashMap<>());

        Recording(YcsbService inner) {
            this.inner = inner;
        }

        @Override
        public void plan(YcsbQuery q, FanoutPlan<YcsbQuery, byte[]> plan) {
            if (traces.put(q, new Trace(Thread.currentThread())) != null) {
                throw new IllegalStateException("plan ran twice for one request");
            }
            inner.plan(q, new InterceptingPlan<>(plan, (r, call, reply, h) -> {
                traces.get(r).replies.add(Thread.currentThread());
                return h.onReply(r, call, reply);
            }));
        }

        @Override
        public YcsbService.Result merge(YcsbQuery q, Replies<byte[]> replies, FanoutPlan<YcsbQuery, byte[]> next) {
            traces.get(q).merges.add(Thread.currentThread());
            return inner.merge(q, replies, next);
        }
    }

    static List<YcsbQuery> queries(int fanout) {
        List<YcsbQuery> qs = new ArrayList<>();
        for (int i = 0; i < REQUESTS; i++) {
            qs.add(new YcsbQuery(fanout, i % 3 == 0 ? Size.MEDIUM : Size.SMALL, (i * 37L) % TestCluster.RECORDS));
        }
        return qs;
    }

    interface Check {
        void check(TestCluster cluster, List<Trace> traces);
    }

    /** Runs the load, checks every response and that each step ran once, then {@code check}s the traces. */
    static void run(String configuration, int fanout, Check check) throws Exception {
        Recording[] rec = new Recording[1];
        try (TestCluster cluster = TestCluster.builder(SHARDS).configuration(configuration)
                .wrap(s -> rec[0] = new Recording(s)).start()) {
            List<YcsbQuery> qs = queries(fanout);
            List<HttpResponse<String>> rs = cluster.getAll(qs, IN_FLIGHT);
            for (int i = 0; i < qs.size(); i++) {
                assertEquals(200, rs.get(i).statusCode(), rs.get(i).body());
                assertEquals(cluster.expected(qs.get(i)), rs.get(i).body(), "request " + i);
            }
            List<Trace> traces = new ArrayList<>(rec[0].traces.values());
            assertEquals(REQUESTS, traces.size(), "one plan per request");
            for (Trace t : traces) {
                assertEquals(fanout, t.replies.size(), "one onReply per shard call");
                assertEquals(1, t.merges.size(), "one merge per request");
            }
            check.check(cluster, traces);
        }
    }

    static int ioLoopIndex(TestCluster cluster, Thread t) {
        List<EventLoop> loops = cluster.server.internals().ioLoops().loops();
        for (int i = 0; i < loops.size(); i++) {
            if (loops.get(i).inEventLoop(t)) {
                return i;
            }
        }
        return -1;
    }

    @ParameterizedTest(name = "{0} fanout={1}")
    @CsvSource({"doubleface, 5", "doubleface, 20", "doubleface-fifo, 5", "doubleface-fifo, 20", "doubleface-1, 20"})
    void doubleFaceNeverChangesThreadWithinARequest(String configuration, int fanout) throws Exception {
        run(configuration, fanout, (cluster, traces) -> {
            int[] perLoop = new int[cluster.server.internals().ioLoops().size()];
            for (Trace t : traces) {
                assertNotNull(t.plan);
                for (Thread r : t.replies) {
                    assertSame(t.plan, r, "onReply ran on " + r.getName() + ", plan on " + t.plan.getName());
                }
                assertSame(t.plan, t.merges.get(0), "merge ran on " + t.merges.get(0).getName() + ", plan on " + t.plan.getName());
                int loop = ioLoopIndex(cluster, t.plan);
                assertTrue(loop >= 0, "request ran on " + t.plan.getName() + ", which is not one of the shared I/O loops");
                perLoop[loop]++;
            }
            if (configuration.equals("doubleface-1")) {
                // one frontend loop: every connection, and so every request, lives on io-0
                assertEquals(REQUESTS, perLoop[0], "doubleface-1 uses only the first I/O loop");
            }
        });
    }

    @ParameterizedTest(name = "{0} fanout={1}")
    @CsvSource({"type2a-1f2b, 5", "type2b, 20"})
    void otherModelsProcessRepliesOffTheIoLoops(String configuration, int fanout) throws Exception {
        run(configuration, fanout, (cluster, traces) -> {
            for (Trace t : traces) {
                assertTrue(ioLoopIndex(cluster, t.plan) >= 0, "plan runs on a frontend I/O loop: " + t.plan.getName());
                assertTrue(ioLoopIndex(cluster, t.merges.get(0)) >= 0, "merge runs on a frontend I/O loop");
                for (Thread r : t.replies) {
                    assertFalse(ioLoopIndex(cluster, r) >= 0, configuration + ": onReply ran on I/O loop " + r.getName());
                }
            }
        });
    }
}
