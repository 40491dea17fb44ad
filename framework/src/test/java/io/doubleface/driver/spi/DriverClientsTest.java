package io.doubleface.driver.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** {@link DriverClients}: registering, refusing after close, and a client registered while close runs. */
class DriverClientsTest {

    /** A client that counts how often it was closed. */
    static final class Client {
        final AtomicInteger closes = new AtomicInteger();

        void close() {
            closes.incrementAndGet();
        }
    }

    @Test
    void closeClosesEveryRegisteredClientOnceAndEmptiesTheRegistry() {
        DriverClients d = new DriverClients("test driver t://h:1");
        DriverClients.Registry<Client> r = d.registry();
        Client a = r.add(new Client(), Client::close);
        Client b = r.add(new Client());
        Client gone = r.add(new Client());
        r.remove(gone);
        DriverClients.Registry<Client> other = d.registry();
        Client forgotten = other.add(new Client());
        d.forget(forgotten);
        assertTrue(other.snapshot().isEmpty(), "forget finds the client in its registry");
        assertEquals(2, r.snapshot().size());
        assertFalse(d.isClosed());
        assertTrue(d.close());
        assertFalse(d.close(), "close is idempotent: only the first call closes the clients");
        r.closeAll(Client::close);
        assertEquals(1, a.closes.get());
        assertEquals(1, b.closes.get());
        assertEquals(0, gone.closes.get());
        assertTrue(r.snapshot().isEmpty());
    }

    @Test
    void aClosedDriverRefusesClientsByNameAndDiscardsThem() {
        DriverClients d = new DriverClients("test driver t://h:1");
        DriverClients.Registry<Client> r = d.registry();
        d.requireOpen();
        d.close();
        IllegalStateException e = assertThrows(IllegalStateException.class, d::requireOpen);
        assertEquals("test driver t://h:1 is closed", e.getMessage());
        Client c = new Client();
        e = assertThrows(IllegalStateException.class, () -> r.add(c, Client::close));
        assertEquals("test driver t://h:1 is closed", e.getMessage());
        assertEquals(1, c.closes.get(), "a refused client is discarded");
        assertTrue(r.snapshot().isEmpty());
    }

    @Test
    void closeOnLoopsClosesLoopClientsOnTheirLoop() throws Exception {
        io.doubleface.internal.loop.LoopGroup g = new io.doubleface.internal.loop.LoopGroup("dc-test", 1,
                io.doubleface.driver.Transport.NIO);
        try {
            DriverClients d = new DriverClients("test driver");
            DriverClients.Registry<LoopClient<?>> r = d.registry();
            io.netty.channel.EventLoop loop = g.loops().get(0);
            List<Boolean> onLoop = new ArrayList<>();
            LoopClient<?> c = (LoopClient<?>) java.lang.reflect.Proxy.newProxyInstance(
                    LoopClient.class.getClassLoader(), new Class<?>[] {LoopClient.class}, (p, m, a) -> switch (m.getName()) {
                        case "loop" -> loop;
                        case "close" -> {
                            onLoop.add(loop.inEventLoop());
                            yield null;
                        }
                        case "toString" -> "proxy client";
                        case "hashCode" -> System.identityHashCode(p);
                        case "equals" -> p == a[0];
                        default -> throw new UnsupportedOperationException(m.getName());
                    });
            r.add(c);
            d.close();
            DriverClients.closeOnLoops(r, java.time.Duration.ofSeconds(5));
            assertEquals(List.of(true), onLoop);
            assertTrue(r.snapshot().isEmpty());
        } finally {
            g.close();
        }
    }

    /**
     * Threads register clients while another closes the driver: every client is either returned to
     * its caller and closed by the close, or refused and discarded; none is left open.
     */
    @Test
    void aClientRegisteredWhileCloseRunsIsClosedOrRefused() throws Exception {
        for (int round = 0; round < 200; round++) {
            DriverClients d = new DriverClients("race driver");
            DriverClients.Registry<Client> r = d.registry();
            ConcurrentLinkedQueue<Client> accepted = new ConcurrentLinkedQueue<>();
            ConcurrentLinkedQueue<Client> refused = new ConcurrentLinkedQueue<>();
            int threads = 4;
            CountDownLatch start = new CountDownLatch(1);
            List<Thread> openers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                Thread th = new Thread(() -> {
                    try {
                        start.await();
                    } catch (InterruptedException e) {
                        return;
                    }
                    for (int i = 0; i < 50; i++) {
                        Client c = new Client();
                        try {
                            assertSame(c, r.add(c, Client::close));
                            accepted.add(c);
                        } catch (IllegalStateException e) {
                            refused.add(c);
                        }
                    }
                });
                th.start();
                openers.add(th);
            }
            start.countDown();
            if (d.close()) {
                r.closeAll(Client::close);
            }
            for (Thread th : openers) {
                th.join();
            }
            assertEquals(threads * 50, accepted.size() + refused.size());
            for (Client c : accepted) {
                assertTrue(c.closes.get() >= 1, "a client handed out before close is closed by it");
            }
            for (Client c : refused) {
                assertTrue(c.closes.get() >= 1, "a refused client is discarded");
            }
            assertTrue(r.snapshot().isEmpty(), "nothing stays registered after close");
        }
    }
}
