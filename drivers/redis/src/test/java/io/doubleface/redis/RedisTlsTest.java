package io.doubleface.redis;

import io.doubleface.driver.Transport;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.doubleface.driver.spi.BlockingClient;
import io.doubleface.driver.DriverSettings;
import io.doubleface.driver.spi.LoopClient;
import io.doubleface.driver.ShardException;
import io.doubleface.internal.loop.LoopGroup;
import io.doubleface.testing.Outcomes;
import io.netty.pkitesting.CertificateBuilder;
import io.netty.pkitesting.X509Bundle;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code rediss://}: the driver over TLS to a real {@code redis-server} started with a TLS port and a
 * certificate generated here. Skipped (with the reason) when the {@code redis-server} found has no
 * TLS support (the binary in the embedded-redis jar); CI installs Debian's, which has it.
 */
class RedisTlsTest {

    private static final DriverSettings SETTINGS = DriverSettings.DEFAULT.withCallTimeout(Duration.ofSeconds(5))
            .withConnectTimeout(Duration.ofSeconds(5));
    private static final Redis<String, String> R = Redis.utf8();

    private static Process server;
    private static int port;
    private static Path certPem;
    private static Path dir;

    @BeforeAll
    static void startTlsRedis() throws Exception {
        X509Bundle cert = new CertificateBuilder().subject("CN=localhost").addSanDnsName("localhost")
                .addSanIpAddress("127.0.0.1").setIsCertificateAuthority(true).ecp256().buildSelfSigned();
        certPem = cert.toTempCertChainPem().toPath();
        Path keyPem = cert.toTempPrivateKeyPem().toPath();
        dir = Files.createTempDirectory("redis-tls");
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        Path binary = RedisServers.findBinary();
        server = new ProcessBuilder(binary.toString(), "--port", "0", "--tls-port", Integer.toString(port),
                "--bind", "127.0.0.1", "--tls-cert-file", certPem.toString(), "--tls-key-file", keyPem.toString(),
                "--tls-ca-cert-file", certPem.toString(), "--tls-auth-clients", "no", "--save", "",
                "--appendonly", "no", "--dir", dir.toString())
                .redirectErrorStream(true).redirectOutput(dir.resolve("redis.log").toFile()).start();
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < until && server.isAlive() && !listening()) {
            Thread.sleep(50);
        }
        String log = Files.readString(dir.resolve("redis.log"));
        assumeTrue(server.isAlive() && listening(), "redis-server " + binary + " has no TLS support here: " + log);
    }

    private static boolean listening() {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 200);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    @AfterAll
    static void stop() throws Exception {
        if (server != null) {
            server.destroy();
            server.waitFor(5, TimeUnit.SECONDS);
        }
    }

    private static String tlsUri(String options) {
        return "rediss://127.0.0.1:" + port + "?cacert=" + certPem + options;
    }

    @Test
    void blockingAndLoopClientsRoundTripOverTls() throws Exception {
        try (RedisDriver d = RedisDriver.of(tlsUri(""), SETTINGS); LoopGroup group = new LoopGroup("rtls", 1,
                Transport.AUTO)) {
            assertEquals("rediss://127.0.0.1:" + port + "?cacert=" + certPem, d.describe());
            BlockingClient<RedisCommand<?>> b = d.openBlocking();
            assertEquals("OK", b.call(0, R.set("tls-key", "over tls"), TimeUnit.SECONDS.toNanos(5)));
            assertEquals("over tls", b.call(0, R.get("tls-key"), TimeUnit.SECONDS.toNanos(5)));
            b.close();

            LoopClient<RedisCommand<?>> c = d.openOn(group.loops().get(0));
            Outcomes out = new Outcomes(c.loop(), 1);
            c.loop().submit(() -> c.send(0, R.get("tls-key"), out, 0)).sync();
            out.await();
            assertEquals("over tls", out.value(0));
            c.loop().submit(c::close).sync();
        }
    }

    @Test
    void anUntrustedCertificateOrPlainTextFailsUnavailable() throws Exception {
        // the JDK's trust store does not know the test's self-signed certificate
        try (RedisDriver d = RedisDriver.of("rediss://127.0.0.1:" + port, SETTINGS)) {
            BlockingClient<RedisCommand<?>> b = d.openBlocking();
            ShardException e = assertThrows(ShardException.class,
                    () -> b.call(0, R.get("tls-key"), TimeUnit.SECONDS.toNanos(5)));
            assertEquals(ShardException.Kind.UNAVAILABLE, e.kind(), e.getMessage());
            b.close();
        }
        // plain text to the TLS port: no answer the driver accepts
        try (RedisDriver d = RedisDriver.of("redis://127.0.0.1:" + port,
                SETTINGS.withCallTimeout(Duration.ofSeconds(1)).withConnectTimeout(Duration.ofSeconds(1)))) {
            BlockingClient<RedisCommand<?>> b = d.openBlocking();
            assertThrows(ShardException.class, () -> b.call(0, R.get("tls-key"), TimeUnit.SECONDS.toNanos(1)));
            b.close();
        }
    }

    @Test
    void tlsOptionsAreCheckedWithAReason() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> RedisDriver.of("redis://127.0.0.1:" + port + "?cacert=" + certPem, SETTINGS));
        assertTrue(e.getMessage().contains("cacert needs rediss://"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> RedisDriver.of(tlsUri("&verify=maybe"), SETTINGS));
        assertTrue(e.getMessage().contains("verify=maybe (expected: full, ca or none)"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> RedisDriver.of("rediss://127.0.0.1:" + port + "?cacert=/no/such.pem", SETTINGS));
        assertTrue(e.getMessage().contains("not readable"), e.getMessage());
    }
}
