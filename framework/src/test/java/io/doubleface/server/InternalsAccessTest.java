package io.doubleface.server;

import io.doubleface.driver.Transport;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.driver.FlushMode;
import io.doubleface.internal.engine.EchoService;
import io.doubleface.internal.engine.GeneratedShards;
import io.doubleface.internal.loop.LoopGroup;
import io.doubleface.model.Configuration;
import io.doubleface.server.internal.ServerRuntime;
import io.doubleface.testing.TestRead;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A running server's parts reached through {@link FanoutServer#internals()} (typed, no reflection),
 * agreeing with what its public API says of them; and {@code internals()} being the one public
 * method that names an internal type.
 */
class InternalsAccessTest {

    @Test
    void theServersPartsAgreeWithItsPublicAccessors() throws Exception {
        GeneratedShards driver = new GeneratedShards(3);
        FanoutServer.Builder b = FanoutServer.builder();
        io.doubleface.api.Backend<TestRead> echo = b.backend("echo", driver, false);
        b.get("/echo", new EchoService(echo), new EchoService.Binding());
        try (FanoutServer server = b.port(0).adminPort(-1).ioThreads(2).configuration("type1-4")
                .deadline(Duration.ofSeconds(10)).start()) {
            HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + server.port() + "/echo?key=5&fan=3")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(200, r.statusCode(), r.body());

            ServerRuntime parts = server.internals();
            assertSame(parts, server.internals());
            assertEquals(server.configuration(), parts.engine().active());
            assertEquals(server.configuration(), parts.knobs().configuration());
            assertEquals("type1-4", server.configuration().name());
            assertNull(parts.adapter(), "a static configuration has no adapter");
            assertEquals(server.backends(), parts.config().backends());
            assertEquals(server.port(), parts.port());

            LoopGroup loops = parts.ioLoops();
            assertEquals(2, loops.size());
            assertEquals(2, server.ioThreads());
            assertEquals(loops.isEpoll() ? Transport.EPOLL : Transport.NIO, server.transport());
            assertSame(loops, parts.loopGroups().get(0), "the I/O loops first");
            assertEquals(0, parts.engine().inFlight());

            // one set of knobs: a change made through either side shows on both
            parts.knobs().flushMode(FlushMode.PER_WRITE);
            assertEquals(FlushMode.PER_WRITE, server.flushMode());
            server.traceStages(3);
            assertEquals(3, parts.knobs().traceStages());
            assertEquals("doubleface", parts.knobs().switchTo(Configuration.parse("doubleface")).name());
            assertEquals("doubleface", server.configuration().name());
            assertEquals(1, parts.stats().switches());
        }
    }

    @Test
    void onlyInternalsReturnsAnInternalType() {
        List<String> internal = List.of("io.doubleface.internal.", "io.doubleface.tune.LoadAdapter", "io.doubleface.sched.ReplyScheduler",
                "io.doubleface.server.internal.");
        List<String> found = new ArrayList<>();
        for (Method m : FanoutServer.class.getDeclaredMethods()) {
            if (Modifier.isPublic(m.getModifiers())) {
                String type = m.getReturnType().getName();
                if (internal.stream().anyMatch(type::startsWith)) {
                    found.add(m.getName() + " -> " + type);
                }
            }
        }
        assertEquals(List.of("internals -> " + ServerRuntime.class.getName()), found);
        for (Method m : FanoutServer.Builder.class.getDeclaredMethods()) {
            if (Modifier.isPublic(m.getModifiers())) {
                String type = m.getReturnType().getName();
                assertTrue(internal.stream().noneMatch(type::startsWith), m + " returns " + type);
            }
        }
    }
}
