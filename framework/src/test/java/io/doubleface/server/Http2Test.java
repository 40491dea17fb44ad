package io.doubleface.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.doubleface.api.ErrorEncoder;
import io.doubleface.api.HttpBinding;
import io.doubleface.api.HttpRequestView;
import io.doubleface.internal.engine.EchoService;
import io.doubleface.internal.engine.GeneratedShards;
import io.doubleface.testing.TestRead;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2GoAwayFrame;
import io.netty.handler.codec.http2.Http2MultiplexHandler;
import io.netty.handler.codec.http2.Http2StreamChannel;
import io.netty.handler.codec.http2.Http2StreamChannelBootstrap;
import io.netty.handler.codec.http2.Http2StreamFrameToHttpObjectCodec;
import io.netty.pkitesting.CertificateBuilder;
import io.netty.pkitesting.X509Bundle;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.FieldSource;

/**
 * HTTP/2 on the HTTP port, over real sockets, under every threading model: prior knowledge
 * (Netty's HTTP/2 client), {@code Upgrade: h2c} and ALPN {@code h2} over TLS (the JDK's
 * {@link HttpClient}) answer what HTTP/1.1 answers — a route's body and status, {@code 404},
 * {@code 405} with {@code Allow}, {@code 413} (declared and streamed bodies), {@code 414}, {@code 431}, the server's JSON
 * error bodies; many streams at once on one connection; an answer larger than the flow-control
 * windows arrives whole; an upgrade request with a body is answered over HTTP/1.1 (and the connection
 * stays HTTP/1.1); a draining server sends {@code GOAWAY}, answers the open stream and closes.
 */
@Timeout(300)
class Http2Test {

    /** One configuration of each model and variant whose code path differs. */
    static final List<String> MODELS = List.of("doubleface", "doubleface-fifo", "thread-2", "thread-virtual", "type1-2",
            "type2a-1f1b", "type2b", "type2b-fixed-2");

    static final int MAX_BODY = 1024;
    static final int LARGE = 100_000; // more than the default 64 KiB stream and connection windows

    static GeneratedShards driver;
    static FanoutServer server;
    static FanoutServer tlsServer;
    static X509Bundle cert;
    static EventLoopGroup clientLoop;

    /** {@code POST /upload} (with {@link HttpFastPathTest.TextService}): the body's length. */
    static final class UploadBinding implements HttpBinding<HttpFastPathTest.Text, HttpFastPathTest.Text> {
        @Override
        public HttpFastPathTest.Text decode(HttpRequestView request) {
            return new HttpFastPathTest.Text(request.body().readableBytes());
        }

        @Override
        public ByteBuf encode(HttpFastPathTest.Text response, ByteBufAllocator alloc) {
            return io.netty.buffer.ByteBufUtil.writeAscii(alloc, "got " + response.n());
        }
    }

    static FanoutServer.Builder builder() {
        FanoutServer.Builder b = FanoutServer.builder();
        io.doubleface.api.Backend<TestRead> echo = b.backend("echo", driver, false);
        return b.get("/echo", new EchoService(echo), new EchoService.Binding())
                .get("/text", new HttpFastPathTest.TextService(),
                        new HttpFastPathTest.TextBinding(HttpResponseStatus.OK, "text/plain"))
                .post("/upload", new HttpFastPathTest.TextService(), new UploadBinding())
                .port(0).adminPort(-1).ioThreads(2)
                .deadline(Duration.ofSeconds(10))
                .errorEncoder(ErrorEncoder.json())
                .limits(new HttpLimits(256, 4096, MAX_BODY, 16, Duration.ofSeconds(60)));
    }

    @BeforeAll
    static void start() throws Exception {
        driver = new GeneratedShards(4);
        cert = new CertificateBuilder().subject("CN=localhost").addSanDnsName("localhost")
                .addSanIpAddress("127.0.0.1").setIsCertificateAuthority(true).ecp256().buildSelfSigned();
        server = builder().start();
        tlsServer = builder().tls(cert.toTempCertChainPem().toPath(), cert.toTempPrivateKeyPem().toPath()).start();
        clientLoop = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
        if (tlsServer != null) {
            tlsServer.close();
        }
        if (clientLoop != null) {
            clientLoop.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }

    /** An answer, copied out of Netty's buffers. */
    record Answer(int status, HttpHeaders headers, String body) {}

    /** Netty's HTTP/2 client with prior knowledge: one connection, one stream per request. */
    static final class H2Client implements AutoCloseable {
        final Channel parent;
        final List<Long> goAways = new CopyOnWriteArrayList<>();

        H2Client(int port) throws InterruptedException {
            parent = new Bootstrap().group(clientLoop).channel(NioSocketChannel.class)
                    .handler(new ChannelInitializer<Channel>() {
                        @Override
                        protected void initChannel(Channel ch) {
                            ch.pipeline().addLast(Http2FrameCodecBuilder.forClient().encoderIgnoreMaxHeaderListSize(true).build(),
                                    new Http2MultiplexHandler(new ChannelInboundHandlerAdapter()),
                                    new ChannelInboundHandlerAdapter() {
                                        @Override
                                        public void channelRead(ChannelHandlerContext ctx, Object msg) {
                                            if (msg instanceof Http2GoAwayFrame g) {
                                                goAways.add(g.errorCode());
                                            }
                                            io.netty.util.ReferenceCountUtil.release(msg);
                                        }
                                    });
                        }
                    }).connect("127.0.0.1", port).sync().channel();
        }

        CompletableFuture<Answer> send(FullHttpRequest req) throws InterruptedException {
            CompletableFuture<Answer> answer = new CompletableFuture<>();
            Http2StreamChannel stream = new Http2StreamChannelBootstrap(parent).handler(
                    new ChannelInitializer<Http2StreamChannel>() {
                        @Override
                        protected void initChannel(Http2StreamChannel ch) {
                            ch.pipeline().addLast(new Http2StreamFrameToHttpObjectCodec(false),
                                    new HttpObjectAggregator(16 << 20),
                                    new SimpleChannelInboundHandler<FullHttpResponse>() {
                                        @Override
                                        protected void channelRead0(ChannelHandlerContext ctx, FullHttpResponse r) {
                                            answer.complete(new Answer(r.status().code(), r.headers().copy(),
                                                    r.content().toString(StandardCharsets.UTF_8)));
                                        }

                                        @Override
                                        public void channelInactive(ChannelHandlerContext ctx) {
                                            answer.completeExceptionally(new IllegalStateException("stream closed"));
                                        }

                                        @Override
                                        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                                            answer.completeExceptionally(cause);
                                        }
                                    });
                        }
                    }).open().sync().getNow();
            stream.writeAndFlush(req).addListener(f -> {
                if (!f.isSuccess()) {
                    answer.completeExceptionally(f.cause());
                }
            });
            return answer;
        }

        Answer get(String target) throws Exception {
            return send(request(HttpMethod.GET, target, null)).get(30, TimeUnit.SECONDS);
        }

        @Override
        public void close() {
            parent.close().syncUninterruptibly();
        }
    }

    static FullHttpRequest request(HttpMethod method, String target, byte[] body) {
        FullHttpRequest r = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, method, target,
                body == null ? Unpooled.EMPTY_BUFFER : Unpooled.wrappedBuffer(body));
        r.headers().set(HttpHeaderNames.HOST, "127.0.0.1");
        r.headers().set(io.netty.handler.codec.http2.HttpConversionUtil.ExtensionHeaderNames.SCHEME.text(), "http");
        return r;
    }

    static HttpResponse<String> http1(String target) throws Exception {
        HttpClient c = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        return c.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + target)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    static JsonObject json(Answer a) {
        assertEquals("application/json", a.headers().get(HttpHeaderNames.CONTENT_TYPE), a.body());
        return JsonParser.parseString(a.body()).getAsJsonObject();
    }

    @ParameterizedTest(name = "{0}")
    @FieldSource("MODELS")
    void priorKnowledgeAnswersWhatHttp1Answers(String model) throws Exception {
        server.switchTo(model);
        try (H2Client c = new H2Client(server.port())) {
            for (String target : new String[] {"/echo?key=5&fan=3", "/echo?key=7", "/text?n=10"}) {
                HttpResponse<String> h1 = http1(target);
                Answer h2 = c.get(target);
                assertEquals(h1.statusCode(), h2.status(), target);
                assertEquals(h1.body(), h2.body(), target);
                assertEquals(h1.headers().firstValue("content-type").orElseThrow(),
                        h2.headers().get(HttpHeaderNames.CONTENT_TYPE), target);
            }
            Answer bad = c.get("/echo?key=-1"); // the binding's 400
            assertEquals(400, bad.status(), bad.body());
            assertEquals(400, json(bad).get("status").getAsInt());

            Answer missing = c.get("/nope");
            assertEquals(404, missing.status(), missing.body());
            JsonObject m = json(missing);
            assertEquals(404, m.get("status").getAsInt());
            assertEquals("no such path: /nope", m.get("error").getAsString());

            Answer wrong = c.send(request(HttpMethod.DELETE, "/upload", null)).get(30, TimeUnit.SECONDS);
            assertEquals(405, wrong.status(), wrong.body());
            assertEquals("POST", wrong.headers().get(HttpHeaderNames.ALLOW));
            assertEquals(405, json(wrong).get("status").getAsInt());

            Answer upload = c.send(request(HttpMethod.POST, "/upload", new byte[MAX_BODY])).get(30, TimeUnit.SECONDS);
            assertEquals(200, upload.status(), upload.body());
            assertEquals("got " + MAX_BODY, upload.body());

            FullHttpRequest declared = request(HttpMethod.POST, "/upload", new byte[MAX_BODY + 1]);
            HttpUtil.setContentLength(declared, MAX_BODY + 1);
            Answer tooLarge = c.send(declared).get(30, TimeUnit.SECONDS);
            assertEquals(413, tooLarge.status(), tooLarge.body());
            assertEquals(413, json(tooLarge).get("status").getAsInt());
            // no content-length: the body is counted as it arrives
            Answer streamed = c.send(request(HttpMethod.POST, "/upload", new byte[4 * MAX_BODY]))
                    .get(30, TimeUnit.SECONDS);
            assertEquals(413, streamed.status(), streamed.body());

            Answer longTarget = c.get("/text?n=1&pad=" + "x".repeat(300));
            assertEquals(414, longTarget.status(), longTarget.body());

            // over SETTINGS_MAX_HEADER_LIST_SIZE (the request line's and the headers' limits together)
            FullHttpRequest bigHead = request(HttpMethod.GET, "/echo?key=1", null);
            bigHead.headers().set("x-big", "x".repeat(4600));
            Answer tooBig = c.send(bigHead).get(30, TimeUnit.SECONDS);
            assertEquals(431, tooBig.status(), tooBig.body());

            // the connection is still good after the error answers
            assertEquals("5:" + 3 * TestRead.REPLY_SIZE, c.get("/echo?key=5&fan=3").body());
        }
    }

    @ParameterizedTest(name = "{0}")
    @FieldSource("MODELS")
    void manyStreamsAtOnceAndALargeAnswerOnOneConnection(String model) throws Exception {
        server.switchTo(model);
        try (H2Client c = new H2Client(server.port())) {
            List<CompletableFuture<Answer>> answers = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                answers.add(c.send(request(HttpMethod.GET, "/echo?key=" + i + "&fan=" + (1 + i % 4), null)));
            }
            CompletableFuture<Answer> large = c.send(request(HttpMethod.GET, "/text?n=" + LARGE, null));
            for (int i = 0; i < answers.size(); i++) {
                Answer a = answers.get(i).get(60, TimeUnit.SECONDS);
                assertEquals(200, a.status(), a.body());
                assertEquals(i + ":" + (1 + i % 4) * TestRead.REPLY_SIZE, a.body());
            }
            Answer a = large.get(60, TimeUnit.SECONDS);
            assertEquals(200, a.status());
            assertEquals(String.valueOf(LARGE), a.headers().get(HttpHeaderNames.CONTENT_LENGTH));
            assertEquals(HttpFastPathTest.body(LARGE), a.body());
        }
    }

    @ParameterizedTest(name = "{0}")
    @FieldSource("MODELS")
    void theJdkClientUpgradesACleartextConnection(String model) throws Exception {
        server.switchTo(model);
        HttpClient c = HttpClient.newBuilder().version(HttpClient.Version.HTTP_2).build();
        String base = "http://127.0.0.1:" + server.port();
        for (int i = 0; i < 3; i++) { // the first asks for h2c and is answered on stream 1; the others follow on h2
            HttpResponse<String> r = c.send(HttpRequest.newBuilder(URI.create(base + "/echo?key=" + i + "&fan=2"))
                    .build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(200, r.statusCode(), r.body());
            assertEquals(i + ":" + 2 * TestRead.REPLY_SIZE, r.body());
            assertEquals(HttpClient.Version.HTTP_2, r.version());
        }
        HttpResponse<String> large = c.send(HttpRequest.newBuilder(URI.create(base + "/text?n=" + LARGE)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(HttpFastPathTest.body(LARGE), large.body());
        HttpResponse<String> missing = c.send(HttpRequest.newBuilder(URI.create(base + "/nope")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(404, missing.statusCode());
        assertEquals(404, JsonParser.parseString(missing.body()).getAsJsonObject().get("status").getAsInt());
        assertEquals(HttpClient.Version.HTTP_2, missing.version());
    }

    /** Sends {@code raw} on a new connection and reads until {@code until} arrived or the server closed. */
    static String raw(String raw, String until) throws Exception {
        try (java.net.Socket s = new java.net.Socket("127.0.0.1", server.port())) {
            s.setSoTimeout(10_000);
            s.getOutputStream().write(raw.getBytes(StandardCharsets.ISO_8859_1));
            java.io.InputStream in = s.getInputStream();
            StringBuilder got = new StringBuilder();
            byte[] b = new byte[4096];
            while (!got.toString().contains(until)) {
                int n = in.read(b);
                if (n < 0) {
                    break;
                }
                got.append(new String(b, 0, n, StandardCharsets.ISO_8859_1));
            }
            return got.toString();
        }
    }

    static final String UPGRADE = "Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n"
            + "HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n";

    @ParameterizedTest(name = "{0}")
    @FieldSource("MODELS")
    void anUpgradeRequestWithABodyIsAnsweredOverHttp1(String model) throws Exception {
        server.switchTo(model);
        String answer = raw("POST /upload HTTP/1.1\r\nHost: x\r\n" + UPGRADE + "Content-Length: 3\r\n\r\nabc"
                + "GET /text?n=4 HTTP/1.1\r\nHost: x\r\n\r\n", "abcd");
        assertTrue(answer.startsWith("HTTP/1.1 200 OK\r\n"), answer);
        assertTrue(answer.contains("\r\n\r\ngot 3HTTP/1.1 200 OK\r\n"), answer); // the connection stays HTTP/1.1
        String upgraded = raw("GET /text?n=4 HTTP/1.1\r\nHost: x\r\n" + UPGRADE + "\r\n", "\r\n\r\n");
        assertTrue(upgraded.startsWith("HTTP/1.1 101 Switching Protocols\r\n"), upgraded);
    }

    @ParameterizedTest(name = "{0}")
    @FieldSource("MODELS")
    void tlsNegotiatesH2ByAlpn(String model) throws Exception {
        tlsServer.switchTo(model);
        SSLContext ssl = SSLContext.getInstance("TLS");
        ssl.init(null, cert.toTrustManagerFactory().getTrustManagers(), null);
        String base = "https://127.0.0.1:" + tlsServer.port();
        HttpClient h2 = HttpClient.newBuilder().sslContext(ssl).version(HttpClient.Version.HTTP_2).build();
        HttpClient h1 = HttpClient.newBuilder().sslContext(ssl).version(HttpClient.Version.HTTP_1_1).build();
        for (String target : new String[] {"/echo?key=9&fan=4", "/nope", "/text?n=" + LARGE}) {
            HttpResponse<String> a = h2.send(HttpRequest.newBuilder(URI.create(base + target)).build(),
                    HttpResponse.BodyHandlers.ofString());
            HttpResponse<String> b = h1.send(HttpRequest.newBuilder(URI.create(base + target)).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(HttpClient.Version.HTTP_2, a.version(), target);
            assertEquals(HttpClient.Version.HTTP_1_1, b.version(), target);
            assertTrue(a.sslSession().isPresent());
            assertEquals(b.statusCode(), a.statusCode(), target);
            assertEquals(b.body(), a.body(), target);
        }
        HttpResponse<String> tooLarge = h2.send(HttpRequest.newBuilder(URI.create(base + "/upload"))
                .POST(HttpRequest.BodyPublishers.ofByteArray(new byte[MAX_BODY * 2])).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(413, tooLarge.statusCode(), tooLarge.body());
        assertEquals(HttpClient.Version.HTTP_2, tooLarge.version());
    }

    @ParameterizedTest(name = "{0}")
    @FieldSource("MODELS")
    void drainingSendsGoAwayAndClosesTheConnection(String model) throws Exception {
        FanoutServer s = builder().configuration(model).start();
        try (H2Client c = new H2Client(s.port())) {
            assertEquals(200, c.get("/echo?key=1").status());
            s.stop(Duration.ofSeconds(10)); // returns when every connection has closed
            c.parent.closeFuture().await(10, TimeUnit.SECONDS);
            assertTrue(!c.parent.isActive(), "the connection is still open");
            assertEquals(List.of(0L), c.goAways, "one GOAWAY with NO_ERROR");
        } finally {
            s.close();
        }
    }
}
