package io.doubleface.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import io.doubleface.kv.KvRequest;
import io.doubleface.kv.Records;
import io.doubleface.driver.spi.BlockingClient;
import io.doubleface.driver.DriverSettings;
import io.doubleface.driver.spi.ShardDriver;
import io.doubleface.services.ycsb.RecordStore;
import io.doubleface.services.ycsb.RecordStores;
import io.doubleface.mongo.MongoLeafServer;
import io.doubleface.server.FanoutServer;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** {@code leaf mongo}, {@code load-data mongodb://…} and {@code serve --shards mongodb://…}, in-process. */
class MongoCommandsTest {

    /** One in-process run with its own listener for mongo leaves. */
    static final class Run {
        final StringWriter out = new StringWriter();
        final StringWriter err = new StringWriter();
        final StopSignal stop = StopSignal.manual();
        final CompletableFuture<MongoLeafServer> leaf = new CompletableFuture<>();
        final CompletableFuture<FanoutServer> server = new CompletableFuture<>();
        final CliEnv env = new CliEnv(new PrintWriter(out, true), new PrintWriter(err, true), stop, new CliEnv.Listener() {
            @Override
            public void mongoLeafStarted(MongoLeafServer l) {
                leaf.complete(l);
            }

            @Override
            public void serving(FanoutServer s) {
                server.complete(s);
            }
        });

        int run(String... args) {
            return DoubleFaceCli.run(env, args);
        }

        CompletableFuture<Integer> start(String... args) {
            CompletableFuture<Integer> exit = new CompletableFuture<>();
            Thread.ofPlatform().daemon().name("cli-under-test").start(() -> {
                try {
                    exit.complete(run(args));
                } catch (Throwable e) {
                    exit.completeExceptionally(e);
                } finally {
                    leaf.completeExceptionally(new IllegalStateException("command ended; stderr:\n" + err));
                    server.completeExceptionally(new IllegalStateException("command ended; stderr:\n" + err));
                }
            });
            return exit;
        }
    }

    static byte[] expected(KvRequest r, long records) {
        ByteBuf b = Unpooled.buffer(Records.replySize(r));
        try {
            Records.writeReply(r, records, b);
            return ByteBufUtil.getBytes(b);
        } finally {
            b.release();
        }
    }

    static byte[] call(String uri, long records, int shard, KvRequest r) throws Exception {
        RecordStore<?> store = RecordStores.open(uri, DriverSettings.DEFAULT, records);
        try (ShardDriver d = store.driver(); BlockingClient c = d.openBlocking()) {
            ByteBuf b = store.canonical(r, c.call(shard, store.command(shard, r), TimeUnit.SECONDS.toNanos(10)));
            if (store.repliesAreCanonical()) {
                b.release(); // canonical() retained the reply
            }
            try {
                return ByteBufUtil.getBytes(b);
            } finally {
                b.release();
            }
        }
    }

    @Test
    void leafMongoServesLoadedShardsUntilStopped() throws Exception {
        Run r = new Run();
        CompletableFuture<Integer> exit = r.start("leaf", "mongo", "--shards", "2", "--base-port", "0", "--records", "10");
        MongoLeafServer leaf = r.leaf.get(60, TimeUnit.SECONDS);
        try {
            assertTrue(r.out.toString().startsWith("listening on 127.0.0.1:"), r.out.toString());
            assertTrue(r.out.toString().contains("(2 shards, 10 records)"), r.out.toString());
            assertArrayEquals(expected(KvRequest.scan(7, 5), 10), call(leaf.uri(), 10, 1, KvRequest.scan(7, 5)));
        } finally {
            r.stop.stop();
            assertEquals(0, exit.get(30, TimeUnit.SECONDS), r.err.toString());
        }
    }

    @Test
    void loadDataWritesTheDatasetIntoAnEmptyServerAndServeAnswersFromIt() throws Exception {
        MongoServer bare = new MongoServer(new MemoryBackend());
        bare.bind(new InetSocketAddress("127.0.0.1", 0), 1, 1);
        try {
            String uri = "mongodb://127.0.0.1:" + bare.getLocalAddress().getPort();
            Run load = new Run();
            assertEquals(0, load.run("load-data", uri, "--records", "30"), load.err.toString());
            assertTrue(load.out.toString().contains("30 records per shard loaded"), load.out.toString());
            assertArrayEquals(expected(KvRequest.readRecord(29), 30), call(uri, 30, 0, KvRequest.readRecord(29)));

            Run serve = new Run();
            CompletableFuture<Integer> exit = serve.start("serve", "ycsb", "--port", "0", "--admin-port", "-1",
                    "--shards", uri + "," + "127.0.0.1:" + bare.getLocalAddress().getPort(), "--records", "30",
                    "--io-threads", "1");
            FanoutServer server = serve.server.get(60, TimeUnit.SECONDS);
            try {
                HttpResponse<String> q = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + server.port() + "/query?fanout=2&size=large&key=25")).build(),
                        HttpResponse.BodyHandlers.ofString());
                assertEquals(200, q.statusCode(), q.body());
            } finally {
                serve.stop.stop();
                assertEquals(0, exit.get(30, TimeUnit.SECONDS), serve.err.toString());
            }
        } finally {
            bare.shutdownNow();
        }
    }

    @Test
    void badMongoArgumentsAreUsageErrors() {
        Run r = new Run();
        assertEquals(2, r.run("leaf", "mongo", "--shards", "0"), r.err.toString());
        assertTrue(r.err.toString().contains("shards: 0"), r.err.toString());
        Run l = new Run();
        assertEquals(2, l.run("load-data", "mongodb://h:1?transport=udp"), l.err.toString());
        assertTrue(l.err.toString().contains("transport"), l.err.toString());
    }
}
