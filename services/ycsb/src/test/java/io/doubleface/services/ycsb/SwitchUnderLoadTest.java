package io.doubleface.services.ycsb;


import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Run-time switching under concurrent load loses nothing: while many keep-alive connections send
 * queries continuously, the configuration is switched through every model again and again over
 * the admin API; every request gets exactly one response, 200 and byte-identical to the expected
 * one, and the server's counters agree.
 */
class SwitchUnderLoadTest {

    static final int SHARDS = 20;
    static final int CLIENTS = 24;
    static final int SWITCHES = 40;
    /** Every this many requests a client asks for {@code Connection: close} and reconnects. */
    static final int RECONNECT_EVERY = 40;
    /** Responses that must arrive after each switch before the next one (progress, not time). */
    static final int PROGRESS_PER_SWITCH = 30;

    /** The query of a key: shapes mixed by key so in-flight requests differ in fanout and size. */
    static YcsbQuery query(long key) {
        int fanout = new int[] {1, 5, 20, 2}[(int) (key % 4)];
        Size size = key % 5 == 0 && fanout <= 5 ? Size.LARGE : key % 2 == 0 ? Size.SMALL : Size.MEDIUM;
        return new YcsbQuery(fanout, size, key);
    }

    @Test
    void switchKeepsEveryRequestAnsweredExactlyOnce() throws Exception {
        try (TestCluster cluster = TestCluster.start(SHARDS, "doubleface")) {
            // Client t uses keys t, t+CLIENTS, …: requests in flight at the same time have distinct keys.
            int keysPerClient = TestCluster.RECORDS / CLIENTS;
            for (long k = 0; k < TestCluster.RECORDS; k++) {
                cluster.expected(query(k)); // compute (and cache) before the load starts
            }
            AtomicBoolean stop = new AtomicBoolean();
            AtomicLong sent = new AtomicLong();
            AtomicLong answered = new AtomicLong();
            ConcurrentLinkedQueue<String> errors = new ConcurrentLinkedQueue<>();
            List<Thread> clients = new ArrayList<>();
            for (int t = 0; t < CLIENTS; t++) {
                final int client = t;
                clients.add(Thread.ofPlatform().name("client-" + t).start(() -> {
                    int n = 0;
                    RawHttp c = null;
                    try {
                        while (!stop.get() && errors.isEmpty()) {
                            if (c == null) {
                                c = new RawHttp(cluster.server.port());
                            }
                            YcsbQuery q = query(client + (long) CLIENTS * (n % keysPerClient));
                            boolean close = ++n % RECONNECT_EVERY == 0;
                            String path = TestCluster.path(q);
                            c.write(close ? RawHttp.getAndClose(path) : RawHttp.get(path));
                            sent.incrementAndGet();
                            RawHttp.Response r = c.read();
                            if (r == null) {
                                errors.add("client " + client + ": connection closed without a response to " + path);
                                return;
                            }
                            answered.incrementAndGet();
                            if (r.status() != 200) {
                                errors.add("client " + client + ": " + path + " -> " + r);
                                return;
                            }
                            if (!cluster.expected(q).equals(r.text())) {
                                errors.add("client " + client + ": wrong body for " + path + ": " + r);
                                return;
                            }
                            if (close) {
                                if (!c.closedByServer()) {
                                    errors.add("client " + client + ": connection not closed after Connection: close");
                                    return;
                                }
                                c.close();
                                c = null;
                            }
                        }
                    } catch (Throwable e) {
                        errors.add("client " + client + ": " + e);
                    } finally {
                        if (c != null) {
                            try {
                                c.close();
                            } catch (Exception ignored) {
                                // closing
                            }
                        }
                    }
                }));
            }

            List<String> names = new ArrayList<>();
            try {
                awaitProgress(answered, 100, errors);
                int start = Models.ALL.indexOf("doubleface");
                for (int i = 0; i < SWITCHES; i++) {
                    String name = Models.ALL.get((start + 1 + i) % Models.ALL.size());
                    HttpResponse<String> r = cluster.adminPut("/admin/config?name=" + name);
                    assertEquals(200, r.statusCode(), r.body());
                    assertEquals(name, JsonDoc.path(JsonDoc.object(r.body()), "active").asString(), r.body());
                    names.add(name);
                    awaitProgress(answered, answered.get() + PROGRESS_PER_SWITCH, errors);
                }
            } finally {
                stop.set(true);
                for (Thread c : clients) {
                    c.join(TimeUnit.SECONDS.toMillis(60));
                    assertTrue(!c.isAlive(), c.getName() + " did not finish");
                }
            }
            assertTrue(errors.isEmpty(), "client errors: " + errors);
            assertEquals(sent.get(), answered.get(), "every request sent got exactly one response");
            assertTrue(sent.get() >= SWITCHES * PROGRESS_PER_SWITCH, "load ran through the switches: " + sent.get());

            Map<String, Object> stats = cluster.stats();
            assertEquals(sent.get(), JsonDoc.path(stats, "requests", "ok").asLong(), "requests.ok in /admin/stats");
            assertEquals(sent.get(), JsonDoc.path(stats, "requests", "admitted").asLong(), "requests.admitted");
            assertEquals(sent.get(), JsonDoc.path(stats, "requests", "answered").asLong(), "requests.answered: nothing but ok");
            for (String failure : List.of("unavailable", "timeout", "internal_error")) {
                assertEquals(0, JsonDoc.path(stats, "requests", failure).asLong(), failure);
            }
            assertEquals(SWITCHES, JsonDoc.path(stats, "switches").asLong(), "switches in /admin/stats");
            List<Map<String, Object>> log = JsonDoc.objects(stats, "switch_log");
            assertEquals(SWITCHES, log.size(), "switch_log entries");
            String from = "doubleface";
            for (int i = 0; i < SWITCHES; i++) {
                assertEquals(from, log.get(i).get("from"), "switch " + i);
                assertEquals(names.get(i), log.get(i).get("to"), "switch " + i);
                from = names.get(i);
            }
            assertEquals(names.get(SWITCHES - 1), JsonDoc.path(stats, "config").asString());
        }
    }

    /** Waits until {@code counter} reaches {@code target}; fails on a client error or after a generous guard. */
    static void awaitProgress(AtomicLong counter, long target, ConcurrentLinkedQueue<String> errors) throws InterruptedException {
        long guard = System.nanoTime() + TestCluster.GENEROUS.toNanos();
        while (counter.get() < target) {
            if (!errors.isEmpty()) {
                throw new AssertionError("client errors: " + errors);
            }
            if (System.nanoTime() - guard > 0) {
                throw new AssertionError("no progress: " + counter.get() + " of " + target + " responses");
            }
            Thread.sleep(2);
        }
    }
}
