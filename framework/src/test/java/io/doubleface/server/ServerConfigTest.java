package io.doubleface.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.api.Backend;
import io.doubleface.driver.FlushMode;
import io.doubleface.internal.engine.EchoService;
import io.doubleface.internal.engine.GeneratedShards;
import io.doubleface.internal.engine.Outcome;
import io.doubleface.model.Configuration;
import io.doubleface.server.internal.ServerConfig;
import io.doubleface.testing.TestRead;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The builder's options end in an immutable {@link ServerConfig}: what was set is what the
 * configuration says, and nothing done to the builder (or to the lists handed to it) afterwards
 * changes a configuration already built.
 */
class ServerConfigTest {

    @Test
    void theConfigurationSaysWhatWasSet() {
        FanoutServer.Builder b = FanoutServer.builder();
        Backend<TestRead> echo = b.backend("echo", new GeneratedShards(3), false);
        b.get("/echo", new EchoService(echo), new EchoService.Binding());
        ServerConfig c = b.host("127.0.0.2").port(0).adminPort(0).ioThreads(3).configuration("type1-4")
                .deadline(Duration.ofMillis(250)).maxConnections(7).admission(Admission.adaptive(50, 10, 500))
                .limits(HttpLimits.DEFAULTS.withRequestReadTimeout(Duration.ofSeconds(3)))
                .flushMode(FlushMode.PER_WRITE).traceStages(4).prepare(List.of("doubleface")).build();
        assertEquals(List.of(echo), c.backends());
        assertEquals(List.of(), c.ownedDrivers(), "closeOnStop false");
        assertEquals("127.0.0.2", c.host());
        assertEquals(0, c.port());
        assertEquals(-1, c.grpcPort());
        assertEquals(0, c.adminPort());
        assertEquals(3, c.ioThreads());
        assertEquals("type1-4", c.configuration().name());
        assertEquals("type1-4", c.initialConfiguration().name());
        assertEquals(Duration.ofMillis(250), c.deadline());
        assertEquals(7, c.maxConnections());
        assertEquals(new ServerConfig.AdmissionLimit(true, 50, 10, 500), c.admission());
        assertEquals(Duration.ofSeconds(3), c.limits().requestReadTimeout());
        assertEquals(HttpLimits.DEFAULTS.idleTimeout(), c.idleTimeout());
        assertEquals(FlushMode.PER_WRITE, c.flushMode());
        assertEquals(4, c.traceStages());
        assertEquals(List.of("doubleface"), c.prepare().stream().map(Configuration::name).toList());
        assertEquals(1, c.routes().routes().size());
        assertFalse(c.tls());
        assertNull(c.tune());
    }

    @Test
    void theDefaultsAreTheDocumentedOnes() {
        FanoutServer.Builder b = FanoutServer.builder();
        Backend<TestRead> echo = b.backend("echo", new GeneratedShards(1));
        b.get("/echo", new EchoService(echo), new EchoService.Binding());
        ServerConfig c = b.build();
        assertEquals("127.0.0.1", c.host());
        assertEquals(8080, c.port());
        assertEquals(-1, c.adminPort());
        assertEquals("doubleface", c.configuration().name());
        assertEquals(FanoutServer.DEFAULT_DEADLINE_MS, c.deadline().toMillis());
        assertEquals(FanoutServer.DEFAULT_MAX_CONNECTIONS, c.maxConnections());
        assertEquals(FanoutServer.DEFAULT_MAX_QUEUED_BYTES_TOTAL, c.maxQueuedBytesTotal());
        assertEquals(FanoutServer.DEFAULT_HTTP2_MAX_CONCURRENT_STREAMS, c.http2MaxConcurrentStreams());
        assertTrue(c.http2());
        assertNull(c.admission(), "unlimited");
        assertEquals(FlushMode.PER_ITERATION, c.flushMode());
        assertNull(c.pinCpus());
        assertEquals(HttpLimits.DEFAULTS.maxBodySize(), c.limits().maxBodySize());
        assertEquals(List.<Object>of(echo.driver()), List.<Object>copyOf(c.ownedDrivers()), "closed on stop by default");
    }

    @Test
    void changingTheBuilderLaterDoesNotChangeABuiltConfiguration() {
        FanoutServer.Builder b = FanoutServer.builder();
        Backend<TestRead> echo = b.backend("echo", new GeneratedShards(2), false);
        b.get("/echo", new EchoService(echo), new EchoService.Binding());
        List<String> prepare = new ArrayList<>(List.of("doubleface"));
        List<Integer> cpus = new ArrayList<>(List.of(0));
        ServerConfig first = b.port(1234).prepare(prepare).pinIoThreads(cpus).configuration(Configuration.parse("type1-4"))
                .build();

        // the builder goes on: more backends, routes, other options; the lists it was given change too
        Backend<TestRead> other = b.backend("other", new GeneratedShards(5), false);
        b.get("/other", new EchoService(other), new EchoService.Binding());
        b.port(4321).configuration("doubleface").prepare(List.of("type2b")).pinIoThreads(null).admission(Admission.fixed(3));
        prepare.add("type1-8");
        cpus.add(1);

        assertEquals(List.of(echo), first.backends());
        assertEquals(List.of("GET /echo"), first.routes().routes().stream().map(Object::toString).toList());
        assertEquals(1234, first.port());
        assertEquals("type1-4", first.configuration().name());
        assertEquals(List.of("doubleface"), first.prepare().stream().map(Configuration::name).toList());
        assertEquals(List.of(0), first.pinCpus());
        assertNull(first.admission());

        ServerConfig second = b.build();
        assertEquals(List.of(echo, other), second.backends());
        assertEquals(4321, second.port());
        assertEquals(List.of("type2b"), second.prepare().stream().map(Configuration::name).toList());
        assertNull(second.pinCpus());
        assertEquals(List.of(echo), first.backends(), "the first is still what it was");
    }

    @Test
    void itsListsCannotBeChanged() {
        FanoutServer.Builder b = FanoutServer.builder();
        Backend<TestRead> echo = b.backend("echo", new GeneratedShards(2));
        b.get("/echo", new EchoService(echo), new EchoService.Binding());
        ServerConfig c = b.prepare(List.of("doubleface")).pinIoThreads(List.of(0)).build();
        assertThrows(UnsupportedOperationException.class, () -> c.backends().clear());
        assertThrows(UnsupportedOperationException.class, () -> c.ownedDrivers().clear());
        assertThrows(UnsupportedOperationException.class, () -> c.grpcMethods().clear());
        assertThrows(UnsupportedOperationException.class, () -> c.prepare().add(Configuration.parse("type2b")));
        assertThrows(UnsupportedOperationException.class, () -> c.pinCpus().add(1));
        assertThrows(UnsupportedOperationException.class, () -> c.routes().routes().clear());
    }

    @Test
    void itIsARecordOfFinalFields() {
        assertTrue(ServerConfig.class.isRecord());
        for (Field f : ServerConfig.class.getDeclaredFields()) {
            assertTrue(Modifier.isFinal(f.getModifiers()), f.toString());
        }
        assertTrue(ServerConfig.AdmissionLimit.class.isRecord());
    }

    @Test
    void eachServerStartedFromTheTemplateRoutesCountsItsOwnRequests() {
        FanoutServer.Builder b = FanoutServer.builder();
        Backend<TestRead> echo = b.backend("echo", new GeneratedShards(2), false);
        b.get("/echo", new EchoService(echo), new EchoService.Binding());
        ServerConfig c = b.build();
        var one = c.routes().fresh().routes().get(0);
        var two = c.routes().fresh().routes().get(0);
        assertNotSame(one.stats(), two.stats());
        assertSame(one.service(), two.service());
        one.stats().answered(Outcome.OK, System.nanoTime());
        assertEquals(0, two.stats().count(Outcome.OK));
        assertEquals(0, c.routes().routes().get(0).stats().count(Outcome.OK), "the template counts nothing");
    }

    @Test
    void aServerNeedsABackendAndSomethingToServe() {
        IllegalStateException none = assertThrows(IllegalStateException.class, () -> FanoutServer.builder().build());
        assertEquals("no backend (call Builder.backend)", none.getMessage());
        FanoutServer.Builder b = FanoutServer.builder();
        b.backend("echo", new GeneratedShards(2));
        IllegalStateException nothing = assertThrows(IllegalStateException.class, b::build);
        assertEquals("nothing to serve (call Builder.route or Builder.grpcMethod)", nothing.getMessage());
        assertThrows(IllegalStateException.class, b::start, "start() builds the configuration first");
    }
}
