package io.doubleface.kv;

import io.doubleface.driver.Transport;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.doubleface.driver.spi.LoopClient;
import io.doubleface.driver.ShardException;
import io.doubleface.internal.loop.LoopGroup;
import io.doubleface.testing.Outcomes;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.Set;

/**
 * Coverage-guided fuzzing (Jazzer) of the KV client's reply path ({@link KvClientHandler} and the
 * pipelined connection behind it): a shard that answers a read with arbitrary bytes, over a real
 * socket, to the loop client. Every call must end exactly once — a reply, or a failure of a known
 * kind (a malformed frame closes the connection: UNAVAILABLE; an error status: SHARD_ERROR; bytes
 * that never complete a frame: TIMEOUT) — never an exception out of the pipeline or a leaked buffer.
 *
 * <p>Seeds: {@code src/test/resources/io/doubleface/kv/KvReplyFuzzTestInputs/}; {@code JAZZER_FUZZ=1}
 * fuzzes (CI does, bounded). Each input is one connection: the fake shard reads the request, writes
 * the input and closes.
 */
class KvReplyFuzzTest {

    static {
        // one WARN per malformed reply is right for a mid-tier, and noise at many inputs a second
        System.setProperty("org.slf4j.simpleLogger.log.io.doubleface.driver.spi.PipelinedConnection", "error");
    }

    private static final Set<ShardException.Kind> EXPECTED = Set.of(ShardException.Kind.UNAVAILABLE,
            ShardException.Kind.SHARD_ERROR, ShardException.Kind.TIMEOUT);

    private static volatile byte[] answer = new byte[0];
    private static final ServerSocket SHARD;
    private static final LoopGroup LOOPS = new LoopGroup("kvfz", 1, Transport.AUTO);
    private static final KvDriver DRIVER;
    private static final LoopClient<KvRequest> CLIENT;

    static {
        try {
            SHARD = new ServerSocket(0, 16, InetAddress.getLoopbackAddress());
        } catch (IOException e) {
            throw new ExceptionInInitializerError(e);
        }
        Thread.ofPlatform().daemon().name("kv-fuzz-shard").start(KvReplyFuzzTest::serve);
        DRIVER = KvDriver.of(List.of(new InetSocketAddress("127.0.0.1", SHARD.getLocalPort())),
                KvDriver.Options.DEFAULT.withCallTimeout(Duration.ofMillis(150))
                        .withConnectTimeout(Duration.ofSeconds(2)).withReconnectBackoff(Duration.ZERO));
        CLIENT = DRIVER.openOn(LOOPS.loops().get(0));
    }

    /** The fake shard: per connection, read the request, write the current input, close. */
    private static void serve() {
        byte[] buf = new byte[4096];
        while (!SHARD.isClosed()) {
            try (Socket s = SHARD.accept()) {
                s.setSoTimeout(1000);
                InputStream in = s.getInputStream();
                in.read(buf); // the request frame (one read is enough for a read of one record)
                OutputStream out = s.getOutputStream();
                out.write(answer);
                out.flush();
            } catch (IOException e) {
                // the client went away, or a read timed out: next connection
            }
        }
    }

    @FuzzTest(maxDuration = "60s")
    void anyReplyEndsTheCallOnceCleanly(byte[] input) throws Exception {
        answer = input;
        Outcomes o = new Outcomes(CLIENT.loop(), 1);
        CLIENT.loop().submit(() -> CLIENT.send(0, KvRequest.readRecord(7), o, 0)).sync();
        o.await(); // exactly one outcome, on the loop (Outcomes checks)
        if (!o.replied(0)) {
            ShardException.Kind k = o.kind(0);
            assertTrue(EXPECTED.contains(k), "unexpected failure kind " + k + ": " + o.failure(0));
        }
    }
}
