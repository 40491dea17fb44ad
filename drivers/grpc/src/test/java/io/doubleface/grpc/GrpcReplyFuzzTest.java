package io.doubleface.grpc;

import io.doubleface.driver.Transport;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.doubleface.driver.DriverSettings;
import io.doubleface.driver.spi.LoopClient;
import io.doubleface.internal.loop.LoopGroup;
import io.doubleface.testing.Outcomes;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;

/**
 * Coverage-guided fuzzing (Jazzer) of the gRPC reply path: a leaf that answers a unary call with
 * arbitrary bytes in place of its HTTP/2 frames (settings, headers, data, trailers), over a real
 * socket, to the loop client — grpc-java's Netty transport and Netty's HTTP/2 codec decoding, our
 * client delivering. Every call must end exactly once, on its loop, with a reply or a
 * {@link io.doubleface.driver.ShardException}; nothing may leak (paranoid detection). A fresh
 * driver per input: a channel that failed would otherwise wait out grpc-java's reconnect backoff.
 *
 * <p>Seeds: {@code src/test/resources/io/doubleface/grpc/GrpcReplyFuzzTestInputs/};
 * {@code JAZZER_FUZZ=1} fuzzes (CI does, bounded).
 */
class GrpcReplyFuzzTest {

    private static volatile byte[] answer = new byte[0];
    private static final ServerSocket LEAF;
    private static final LoopGroup LOOPS = new LoopGroup("grpcfz", 1, Transport.AUTO);
    private static final DriverSettings SETTINGS = DriverSettings.DEFAULT.withCallTimeout(Duration.ofMillis(200))
            .withConnectTimeout(Duration.ofSeconds(2));

    static {
        try {
            LEAF = new ServerSocket(0, 16, InetAddress.getLoopbackAddress());
        } catch (IOException e) {
            throw new ExceptionInInitializerError(e);
        }
        Thread.ofPlatform().daemon().name("grpc-fuzz-leaf").start(GrpcReplyFuzzTest::serve);
    }

    /** The fake leaf: per connection, read what the client sends first, write the current input, close. */
    private static void serve() {
        byte[] buf = new byte[16384];
        while (!LEAF.isClosed()) {
            try (Socket s = LEAF.accept()) {
                s.setSoTimeout(300);
                InputStream in = s.getInputStream();
                in.read(buf); // the client's preface and settings (and often the call's frames)
                OutputStream out = s.getOutputStream();
                out.write(answer);
                out.flush();
                s.shutdownOutput();
                while (in.read(buf) >= 0) {
                    // until the client closes or 300 ms pass
                }
            } catch (IOException e) {
                // the client went away, or the read timed out: next connection
            }
        }
    }

    @FuzzTest(maxDuration = "60s")
    void anyFramesEndTheCallOnceCleanly(byte[] input) throws Exception {
        answer = input;
        try (GrpcDriver d = GrpcDriver.of("grpc://127.0.0.1:" + LEAF.getLocalPort(), SETTINGS)) {
            LoopClient<GrpcCall<?, ?>> c = d.openOn(LOOPS.loops().get(0));
            Outcomes o = new Outcomes(c.loop(), 1);
            c.loop().submit(() -> c.send(0, TestLeaves.get(5, 10), o, 0)).sync();
            o.await(); // exactly one outcome, on the loop (Outcomes checks); a reply or a ShardException
            c.loop().submit(c::close).sync();
        }
    }
}
