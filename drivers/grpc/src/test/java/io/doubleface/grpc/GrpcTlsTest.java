package io.doubleface.grpc;

import io.doubleface.driver.Transport;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.driver.spi.BlockingClient;
import io.doubleface.driver.DriverSettings;
import io.doubleface.driver.spi.LoopClient;
import io.doubleface.driver.ShardException;
import io.doubleface.internal.loop.LoopGroup;
import io.doubleface.testing.Outcomes;
import io.grpc.netty.GrpcSslContexts;
import io.netty.pkitesting.CertificateBuilder;
import io.netty.pkitesting.X509Bundle;
import java.io.File;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code grpcs://}: the driver over TLS to gRPC leaves serving a certificate generated here, from the
 * loop and the blocking clients; an untrusted certificate and a plaintext client fail UNAVAILABLE.
 */
class GrpcTlsTest {

    private static final DriverSettings SETTINGS = DriverSettings.DEFAULT.withCallTimeout(Duration.ofSeconds(10))
            .withConnectTimeout(Duration.ofSeconds(5));
    private static final long LONG = TimeUnit.SECONDS.toNanos(10);

    private static TestLeaves leaves;
    private static File certPem;

    @BeforeAll
    static void start() throws Exception {
        X509Bundle cert = new CertificateBuilder().subject("CN=localhost").addSanDnsName("localhost")
                .addSanIpAddress("127.0.0.1").setIsCertificateAuthority(true).ecp256().buildSelfSigned();
        certPem = cert.toTempCertChainPem();
        File keyPem = cert.toTempPrivateKeyPem();
        leaves = TestLeaves.startTls(2, 100, GrpcSslContexts.forServer(certPem, keyPem).build());
    }

    @AfterAll
    static void stop() {
        leaves.close();
    }

    private static String uri(String scheme, String options) {
        int a = leaves.addresses().get(0).getPort();
        int b = leaves.addresses().get(1).getPort();
        return scheme + "://127.0.0.1:" + a + ",127.0.0.1:" + b + options;
    }

    @Test
    void loopAndBlockingClientsCallTheLeavesOverTls() throws Exception {
        try (GrpcDriver d = GrpcDriver.of(uri("grpcs", "?cacert=" + certPem), SETTINGS);
                LoopGroup group = new LoopGroup("gtls", 1, Transport.AUTO)) {
            assertTrue(d.describe().startsWith("grpcs://127.0.0.1:"), d.describe());
            BlockingClient<GrpcCall<?, ?>> b = d.openBlocking();
            assertEquals(TestLeaves.reply(1, 5, 200), b.call(1, TestLeaves.get(5, 200), LONG));
            b.close();
            LoopClient<GrpcCall<?, ?>> c = d.openOn(group.loops().get(0));
            Outcomes out = new Outcomes(c.loop(), 2);
            c.loop().submit(() -> {
                c.send(0, TestLeaves.get(7, 64), out, 0);
                c.send(1, TestLeaves.get(8, 64), out, 1);
            }).sync();
            out.await();
            assertEquals(TestLeaves.reply(0, 7, 64), out.value(0));
            assertEquals(TestLeaves.reply(1, 8, 64), out.value(1));
            c.loop().submit(c::close).sync();
        }
    }

    @Test
    void anUntrustedCertificateOrPlaintextFailsUnavailable() {
        for (String u : new String[] {uri("grpcs", ""), uri("grpc", "")}) {
            try (GrpcDriver d = GrpcDriver.of(u, SETTINGS.withCallTimeout(Duration.ofSeconds(3)))) {
                BlockingClient<GrpcCall<?, ?>> b = d.openBlocking();
                ShardException e = assertThrows(ShardException.class,
                        () -> b.call(0, TestLeaves.get(5, 10), TimeUnit.SECONDS.toNanos(3)), u);
                assertEquals(ShardException.Kind.UNAVAILABLE, e.kind(), u + ": " + e.getMessage());
                b.close();
            }
        }
    }

    @Test
    void tlsOptionsAreCheckedWithAReason() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> GrpcDriver.of(uri("grpcs", "?cacert=/no/such.pem"), SETTINGS));
        assertTrue(e.getMessage().contains("not readable"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> GrpcDriver.of(uri("grpcs", "?verify=none"), SETTINGS));
        assertTrue(e.getMessage().contains("unknown option 'verify' (known: cacert=PEM)"), e.getMessage());
    }
}
