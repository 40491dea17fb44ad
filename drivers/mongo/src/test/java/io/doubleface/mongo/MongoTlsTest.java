package io.doubleface.mongo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.driver.spi.BlockingClient;
import io.doubleface.driver.spi.LoopClient;
import io.doubleface.driver.ShardException;
import io.doubleface.internal.loop.LoopGroup;
import io.doubleface.mongo.MongoTestData.Query;
import io.doubleface.testing.Outcomes;
import io.netty.pkitesting.CertificateBuilder;
import io.netty.pkitesting.X509Bundle;
import java.io.File;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * MongoDB shards over TLS ({@code ?tls=true&cacert=PEM}): the driver's own TLS (the Netty stream on
 * the loop, the JDK's for AIO and the blocking client) against a TLS terminator in front of
 * mongo-java-server, which speaks no TLS; a certificate the driver does not trust and a plaintext
 * client against the TLS port fail with UNAVAILABLE or TIMEOUT, never an answer.
 */
class MongoTlsTest {

    static final int RECORDS = 50;
    static final long LONG = TimeUnit.SECONDS.toNanos(10);
    static MongoLeafServer leaf;
    static TlsProxy proxy;
    static File certPem;
    static LoopGroup loops;

    @BeforeAll
    static void start() throws Exception {
        X509Bundle cert = new CertificateBuilder().subject("CN=localhost").addSanDnsName("localhost")
                .addSanIpAddress("127.0.0.1").setIsCertificateAuthority(true).ecp256().buildSelfSigned();
        certPem = cert.toTempCertChainPem();
        leaf = MongoLeafServer.builder().shards(1).start();
        try (MongoDriver d = MongoDriver.of(MongoDriver.parse(leaf.uri()).shards(), MongoLoopClientTest.options());
                BlockingClient<MongoCommand<?>> c = d.openBlocking()) {
            MongoTestData.load(c, 0, RECORDS);
        }
        proxy = new TlsProxy(leaf.addresses().get(0), certPem, cert.toTempPrivateKeyPem());
        loops = new LoopGroup("mtls", 1, io.doubleface.driver.Transport.AUTO);
    }

    @AfterAll
    static void stop() throws Exception {
        loops.close();
        proxy.close();
        leaf.close();
    }

    static String uri(String options) {
        return "mongodb://127.0.0.1:" + proxy.port() + options;
    }

    @ParameterizedTest
    @EnumSource(MongoDriver.Transport.class)
    void loopClientsReadOverTlsOnEveryTransport(MongoDriver.Transport transport) throws Exception {
        Query q = MongoTestData.scan(3, 20, RECORDS);
        try (MongoDriver d = MongoDriver.of(uri("?tls=true&cacert=" + certPem),
                MongoLoopClientTest.options().withTransport(transport))) {
            LoopClient<MongoCommand<?>> c = d.openOn(loops.loops().get(0));
            Outcomes o = new Outcomes(c.loop(), 2);
            c.loop().submit(() -> {
                c.send(0, q.command(), o, 0);
                c.send(0, MongoTestData.read(7, RECORDS).command(), o, 1);
            }).sync();
            o.await();
            q.check(o.value(0), "over TLS, " + transport);
            MongoTestData.read(7, RECORDS).check(o.value(1), "over TLS, " + transport);
            c.loop().submit(c::close).sync();
        }
    }

    @Test
    void theBlockingClientReadsOverTlsAndAFullConnectionStringTakesDfCacert() throws Exception {
        Query q = MongoTestData.read(11, RECORDS);
        for (String u : new String[] {uri("?tls=true&cacert=" + certPem),
                "mongodb://127.0.0.1:" + proxy.port() + "/?directConnection=true&tls=true&df.cacert=" + certPem}) {
            try (MongoDriver d = MongoDriver.of(u, MongoLoopClientTest.options());
                    BlockingClient<MongoCommand<?>> c = d.openBlocking()) {
                q.check(c.call(0, q.command(), LONG), u);
            }
        }
    }

    @Test
    void anUntrustedCertificateOrPlaintextToTheTlsPortNeverAnswers() throws Exception {
        MongoDriver.Options quick = MongoLoopClientTest.options().withConnectTimeout(Duration.ofSeconds(2))
                .withCallTimeout(Duration.ofSeconds(3));
        // tls=true without cacert: the JVM's trust store, which does not hold the test's certificate
        for (String u : new String[] {uri("?tls=true"), uri("")}) {
            try (MongoDriver d = MongoDriver.of(u, quick);
                    BlockingClient<MongoCommand<?>> c = d.openBlocking()) {
                ShardException e = assertThrows(ShardException.class,
                        () -> c.call(0, MongoTestData.read(1, RECORDS).command(), TimeUnit.SECONDS.toNanos(5)), u);
                assertTrue(e.kind() == ShardException.Kind.UNAVAILABLE || e.kind() == ShardException.Kind.TIMEOUT,
                        u + ": " + e.kind() + " " + e.getMessage());
            }
        }
    }

    @Test
    void tlsOptionsAreCheckedWithAReason() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> MongoDriver.parse(uri("?tls=true&cacert=/no/such.pem")));
        assertTrue(e.getMessage().contains("cacert: /no/such.pem is not a readable file"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> MongoDriver.parse(uri("?tls=yes")));
        assertTrue(e.getMessage().contains("tls: 'yes' (expected: true or false)"), e.getMessage());
        assertEquals("true", MongoDriver.parse(uri("?tls=true")).shards().get(0).getSslEnabled().toString());
    }
}
