package io.doubleface.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.internal.engine.EchoService;
import io.doubleface.internal.engine.GeneratedShards;
import io.doubleface.model.Configuration;
import io.doubleface.sched.PendingReply;
import io.doubleface.sched.ReplyOrder;
import io.doubleface.testing.TestRead;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A server configured by type rather than by name: typed configurations at start, on a switch and
 * prepared; the user's own reply order by factory; what a broken factory gets.
 */
@Timeout(60)
class TypedConfigurationTest {

    /** Reverses each batch; counts instances and the replies it ordered. */
    static final class Reverse implements ReplyOrder {
        static final AtomicInteger MADE = new AtomicInteger();
        static final AtomicLong ORDERED = new AtomicLong();

        Reverse() {
            MADE.incrementAndGet();
        }

        @Override
        public String name() {
            return "reverse";
        }

        @Override
        public void order(PendingReply[] batch, int size, PendingReply[] out) {
            for (int i = 0; i < size; i++) {
                out[i] = batch[size - 1 - i];
            }
            ORDERED.addAndGet(size);
        }
    }

    private static FanoutServer.Builder echoServer(GeneratedShards driver) {
        FanoutServer.Builder b = FanoutServer.builder();
        b.get("/echo", new EchoService(b.backend("echo", driver, false)), new EchoService.Binding());
        return b.port(0).adminPort(-1).ioThreads(2).deadline(Duration.ofSeconds(10));
    }

    private static HttpResponse<String> get(HttpClient http, FanoutServer server, String uri) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + uri)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void typedConfigurationsStartSwitchAndRunTheUsersReplyOrder() throws Exception {
        GeneratedShards driver = new GeneratedShards(4);
        Configuration.Type1 parked = new Configuration.Type1(0, 2, false);
        try (FanoutServer server = echoServer(driver)
                .configuration(Configuration.DoubleFace.of())
                .replyOrder(Reverse::new)
                .prepare(parked)
                .start();
                HttpClient http = HttpClient.newHttpClient()) {
            assertEquals(Configuration.DoubleFace.of(), server.configuration());
            long before = Reverse.ORDERED.get();
            for (int key = 0; key < 8; key++) {
                HttpResponse<String> r = get(http, server, "/echo?key=" + key + "&fan=3");
                assertEquals(200, r.statusCode());
                assertEquals(key + ":" + 3 * TestRead.REPLY_SIZE, r.body());
            }
            assertTrue(Reverse.ORDERED.get() - before >= 8 * 3,
                    "every reply went through the user's policy: " + (Reverse.ORDERED.get() - before));
            assertTrue(Reverse.MADE.get() >= 1, "one instance per loop that served a request");

            // a typed switch; the name it reports is the grammar's
            assertEquals("type2a-1f1b", server.switchTo(Configuration.Type2a.of(1, 1)));
            assertEquals(new Configuration.Type2a(1, 1, 0, false, null), server.configuration());
            assertEquals("9:" + 2 * TestRead.REPLY_SIZE, get(http, server, "/echo?key=9&fan=2").body());

            // the prepared configuration was built at start: switching to it is a switch, not a build
            assertEquals("type1-2", server.switchTo(parked));
            assertEquals("4:" + TestRead.REPLY_SIZE, get(http, server, "/echo?key=4&fan=1").body());

            // a configuration naming its own policy does not use the server's default
            server.switchTo(new Configuration.DoubleFace(0, false, "fifo"));
            long reversed = Reverse.ORDERED.get();
            assertEquals("5:" + 3 * TestRead.REPLY_SIZE, get(http, server, "/echo?key=5&fan=3").body());
            assertEquals(reversed, Reverse.ORDERED.get(), "doubleface-fifo ordered with fifo");

            // a configuration that does not fit the server is refused, and the active one stays
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> server.switchTo(new Configuration.DoubleFace(3, false, null)));
            assertTrue(e.getMessage().contains("doubleface-3"), e.getMessage());
            assertEquals("doubleface-fifo", server.configuration().name());
        }
    }

    @Test
    void aNameAndItsTwinRunOnOneModelAndTheNameGivenIsReported() throws Exception {
        GeneratedShards driver = new GeneratedShards(4);
        try (FanoutServer server = echoServer(driver).configuration("doubleface").start();
                HttpClient http = HttpClient.newHttpClient()) {
            // the name is parsed once and goes the typed way
            assertEquals("sdb-1n-2w", server.switchTo("sdb-1n-2w"));
            assertEquals(Configuration.parse("sdb-1n-2w"), server.configuration());
            assertEquals("1:" + 2 * TestRead.REPLY_SIZE, get(http, server, "/echo?key=1&fan=2").body());
            int models = server.internals().engine().models().size();
            long switches = server.internals().engine().switches();

            // the plain spelling of the same threads: the same model, no switch, its name reported
            assertEquals("thread-1f-2", server.switchTo(new Configuration.ThreadPerRequest(1, 2, false, false, false,
                    null)));
            assertEquals("thread-1f-2", server.configuration().name());
            assertEquals(models, server.internals().engine().models().size(), "no second model for the twin");
            assertEquals(switches, server.internals().engine().switches(), "a twin is no switch");
            assertEquals("2:" + 3 * TestRead.REPLY_SIZE, get(http, server, "/echo?key=2&fan=3").body());

            // a name that does not parse is refused before anything changes
            assertThrows(IllegalArgumentException.class, () -> server.switchTo("thread-1f-2-warp"));
            assertEquals("thread-1f-2", server.configuration().name());
        }
    }

    @Test
    void aPolicyFactoryReturningNullIsRefusedWhenTheConfigurationIsBuilt() {
        GeneratedShards driver = new GeneratedShards(2);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> echoServer(driver).replyOrder(() -> null).configuration(Configuration.DoubleFace.of()).start()
                        .close());
        assertTrue(e.getMessage().contains("reply order factory returned null"), e.getMessage());
    }
}
