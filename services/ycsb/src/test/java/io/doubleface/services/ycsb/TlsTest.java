package io.doubleface.services.ycsb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.kv.KvDriver;
import io.doubleface.kv.KvLeafServer;
import io.doubleface.server.FanoutServer;
import io.netty.pkitesting.CertificateBuilder;
import io.netty.pkitesting.X509Bundle;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * TLS on the HTTP upstream and the admin listener, with a certificate generated here and given to
 * the server as PEM files: HTTPS answers byte-identical to plain HTTP's, a plain-text client on
 * the TLS port gets no answer and does not hurt the server, and a bad key file fails start with
 * the file named.
 */
@Timeout(60)
class TlsTest {

    static X509Bundle cert;
    static Path certPem;
    static Path keyPem;

    @BeforeAll
    static void certificate() throws Exception {
        cert = new CertificateBuilder().subject("CN=localhost").addSanDnsName("localhost")
                .addSanIpAddress("127.0.0.1").setIsCertificateAuthority(true).ecp256().buildSelfSigned();
        certPem = cert.toTempCertChainPem().toPath();
        keyPem = cert.toTempPrivateKeyPem().toPath();
    }

    private static HttpClient trustingClient() throws Exception {
        SSLContext ssl = SSLContext.getInstance("TLS");
        ssl.init(null, cert.toTrustManagerFactory().getTrustManagers(), null);
        return HttpClient.newBuilder().sslContext(ssl).connectTimeout(Duration.ofSeconds(10)).build();
    }

    @Test
    void httpsAnswersAsPlainHttpDoesAndTheAdminListenerIsHttpsToo() throws Exception {
        try (TestCluster c = TestCluster.builder(4).configuration("doubleface")
                .tweak(b -> b.tls(certPem, keyPem)).start()) {
            HttpClient client = trustingClient();
            for (int fanout : new int[] {1, 4}) {
                YcsbQuery q = new YcsbQuery(fanout, Size.MEDIUM, 7);
                HttpResponse<String> r = client.send(HttpRequest.newBuilder(
                        URI.create("https://127.0.0.1:" + c.server.port() + TestCluster.path(q))).build(),
                        HttpResponse.BodyHandlers.ofString());
                assertEquals(200, r.statusCode(), r.body());
                assertEquals(c.expected(q), r.body());
                assertTrue(r.sslSession().isPresent(), "not over TLS");
                assertTrue(r.sslSession().get().getProtocol().startsWith("TLSv1."), r.sslSession().get().getProtocol());
            }
            HttpResponse<String> stats = client.send(HttpRequest.newBuilder(
                    URI.create("https://127.0.0.1:" + c.server.adminPort() + "/admin/stats")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(200, stats.statusCode(), stats.body());
            assertTrue(stats.body().contains("\"ok\":2"), stats.body());
        }
    }

    @Test
    void aPlainTextClientOnTheTlsPortGetsNoAnswerAndTheServerGoesOn() throws Exception {
        try (TestCluster c = TestCluster.builder(4).configuration("type2a-1f1b")
                .tweak(b -> b.tls(certPem, keyPem)).start()) {
            YcsbQuery q = new YcsbQuery(2, Size.SMALL, 3);
            try (RawHttp plain = new RawHttp(c.server.port())) {
                plain.write(RawHttp.get(TestCluster.path(q)));
                RawHttp.Response answer;
                try {
                    answer = plain.read(); // null: closed without a byte of HTTP
                } catch (IOException e) {
                    answer = null; // reset
                }
                assertEquals(null, answer, "a plain-text request got an HTTP answer");
            }
            HttpResponse<String> r = trustingClient().send(HttpRequest.newBuilder(
                    URI.create("https://127.0.0.1:" + c.server.port() + TestCluster.path(q))).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(200, r.statusCode(), r.body());
            assertEquals(c.expected(q), r.body());
        }
    }

    @Test
    void grpcOverTlsAnswersWhatHttpsAnswers() throws Exception {
        try (KvLeafServer leaf = KvLeafServer.builder().shards(4).start()) {
            FanoutServer.Builder b = FanoutServer.builder().port(0).grpc(0).adminPort(-1).tls(certPem, keyPem);
            YcsbService.install(b, new KvRecords(KvDriver.of(leaf.addresses())), leaf.records(), 10, 0, true);
            try (FanoutServer server = b.configuration("doubleface").start()) {
                io.grpc.ManagedChannel channel = io.grpc.netty.NettyChannelBuilder
                        .forAddress("127.0.0.1", server.grpcPort())
                        .sslContext(io.grpc.netty.GrpcSslContexts.forClient().trustManager(certPem.toFile()).build())
                        .build();
                try {
                    for (long key : new long[] {1, 42}) {
                        io.doubleface.services.ycsb.v1.QueryReply reply = io.doubleface.services.ycsb.v1.FanoutServiceGrpc
                                .newBlockingStub(channel).withDeadlineAfter(10, java.util.concurrent.TimeUnit.SECONDS)
                                .query(io.doubleface.services.ycsb.v1.QueryRequest.newBuilder().setFanout(3)
                                        .setSize("small").setKey(key).build());
                        HttpResponse<String> https = trustingClient().send(HttpRequest.newBuilder(URI.create(
                                "https://127.0.0.1:" + server.port() + "/query?fanout=3&size=small&key=" + key)).build(),
                                HttpResponse.BodyHandlers.ofString());
                        assertEquals(200, https.statusCode(), https.body());
                        assertEquals(https.body(), reply.getBody().toString(java.nio.charset.StandardCharsets.UTF_8));
                    }
                    // a plain-text gRPC client is not served
                    io.grpc.ManagedChannel plain = io.grpc.netty.NettyChannelBuilder
                            .forAddress("127.0.0.1", server.grpcPort()).usePlaintext().build();
                    try {
                        io.grpc.StatusRuntimeException e = assertThrows(io.grpc.StatusRuntimeException.class,
                                () -> io.doubleface.services.ycsb.v1.FanoutServiceGrpc.newBlockingStub(plain)
                                        .withDeadlineAfter(5, java.util.concurrent.TimeUnit.SECONDS)
                                        .query(io.doubleface.services.ycsb.v1.QueryRequest.newBuilder().setKey(1).build()));
                        assertEquals(io.grpc.Status.Code.UNAVAILABLE, e.getStatus().getCode(), e.toString());
                    } finally {
                        plain.shutdownNow();
                    }
                } finally {
                    channel.shutdownNow();
                }
            }
        }
    }

    @Test
    void aMalformedKeyFileFailsStartWithTheFileNamed(@TempDir Path dir) throws Exception {
        Path badKey = Files.writeString(dir.resolve("bad.key"), "-----BEGIN PRIVATE KEY-----\nnot a key\n"
                + "-----END PRIVATE KEY-----\n");
        try (KvLeafServer leaf = KvLeafServer.builder().shards(1).start()) {
            FanoutServer.Builder b = FanoutServer.builder().port(0).adminPort(-1).tls(certPem, badKey);
            YcsbService.install(b, new KvRecords(KvDriver.of(leaf.addresses())), leaf.records(), 10, 0, false);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, b::start);
            assertTrue(e.getMessage().contains("bad.key"), e.getMessage());

            FanoutServer.Builder missing = FanoutServer.builder().port(0).adminPort(-1)
                    .tls(dir.resolve("nope.pem"), keyPem);
            YcsbService.install(missing, new KvRecords(KvDriver.of(leaf.addresses())), leaf.records(), 10, 0, false);
            e = assertThrows(IllegalArgumentException.class, missing::start);
            assertTrue(e.getMessage().contains("nope.pem") && e.getMessage().contains("not found"), e.getMessage());
        }
    }
}
