package io.doubleface.server.internal.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.engine.EchoService;
import io.doubleface.engine.GeneratedShards;
import io.doubleface.loop.LoopGroup;
import io.doubleface.server.FanoutServer;
import io.doubleface.testing.TestRead;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A running server's engine, adapter and loops reached from outside its package, and what its public
 * API says of them instead (active configuration, loop count, transport) agreeing.
 */
class ServerInternalsTest {

    @Test
    void theServersPartsAreReachableAndAgreeWithItsPublicAccessors() throws Exception {
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

            assertEquals(server.configuration(), ServerInternals.engine(server).active());
            assertEquals("type1-4", server.configuration().name());
            assertNull(ServerInternals.adapter(server), "a static configuration has no adapter");

            LoopGroup loops = ServerInternals.ioLoops(server);
            assertEquals(2, loops.size());
            assertEquals(2, server.ioThreads());
            assertEquals(loops.isEpoll() ? LoopGroup.Transport.EPOLL : LoopGroup.Transport.NIO, server.transport());
            assertEquals(0, ServerInternals.engine(server).inFlight());
        }
        assertThrows(NullPointerException.class, () -> ServerInternals.engine(null));
    }

    @Test
    void noPublicMethodOfTheServerReturnsAnInternalType() {
        List<String> internal = List.of("io.doubleface.engine.", "io.doubleface.tune.LoadAdapter", "io.doubleface.sched.",
                "io.doubleface.server.internal.");
        for (Method m : FanoutServer.class.getDeclaredMethods()) {
            if (Modifier.isPublic(m.getModifiers())) {
                String type = m.getReturnType().getName();
                assertTrue(internal.stream().noneMatch(type::startsWith), m + " returns " + type);
            }
        }
        assertNotNull(Arrays.stream(FanoutServer.class.getDeclaredMethods())
                .filter(m -> m.getName().equals("engine")).findFirst().orElse(null), "the package-private accessor");
    }
}
