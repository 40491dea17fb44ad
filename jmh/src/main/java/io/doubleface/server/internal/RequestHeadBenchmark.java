package io.doubleface.server.internal;

import io.doubleface.jmh.BenchmarkBase;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * What decoding one request head costs in the server's request decoder ({@link StrictRequestDecoder}):
 * with its fast path for common heads ({@code fastPath = true}: {@link SimpleRequestHead}) and
 * without it (Netty's {@code HttpRequestDecoder} plus the obs-fold scan), from a pooled direct buffer
 * as the socket read hands it on, to the {@link HttpRequest} and its empty last content. Heads:
 * {@code wrk} (the request line and {@code Host}, what the benchmarks send) and {@code browser} (eight
 * header fields, 420 bytes).
 *
 * <pre>
 * java -jar jmh/target/benchmarks.jar 'RequestHeadBenchmark' -prof gc
 * </pre>
 *
 * <p>In package {@code io.doubleface.server.internal} because the decoder's constructor is package-private.
 */
@State(Scope.Thread)
public class RequestHeadBenchmark extends BenchmarkBase {

    @Param({"true", "false"})
    public boolean fastPath;

    @Param({"wrk", "browser"})
    public String head;

    private StrictRequestDecoder decoder;
    private ByteBuf in;
    private final List<Object> out = new ArrayList<>(4);

    @Setup(Level.Trial)
    public void setUp() {
        decoder = new StrictRequestDecoder(new HttpDecoderConfig(), fastPath);
        String text = head.equals("wrk")
                ? "GET /query?fanout=5&size=small HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n"
                : "GET /items/42?view=full&lang=en HTTP/1.1\r\nHost: api.example.com\r\n"
                        + "User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0\r\n"
                        + "Accept: application/json\r\nAccept-Language: en-GB,en;q=0.5\r\n"
                        + "Accept-Encoding: gzip, deflate, br\r\nConnection: keep-alive\r\n"
                        + "Cookie: session=8f2a9c3e4b5d6f708192a3b4c5d6e7f8; theme=dark\r\n"
                        + "X-Request-Id: 4bf92f3577b34da6a3ce929d0e0e4736\r\n\r\n";
        byte[] b = text.getBytes(StandardCharsets.US_ASCII);
        in = PooledByteBufAllocator.DEFAULT.directBuffer(b.length);
        in.writeBytes(b);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        in.release();
    }

    @Benchmark
    public Object decode() throws Exception {
        in.readerIndex(0);
        decoder.decode(null, in, out);
        Object first = out.get(0);
        for (int i = 0; i < out.size(); i++) {
            ReferenceCountUtil.release(out.get(i));
        }
        out.clear();
        decoder.heads.poll(); // as the response encoder does per answer
        return first;
    }
}
