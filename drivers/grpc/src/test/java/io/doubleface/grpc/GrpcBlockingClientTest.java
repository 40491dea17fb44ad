package io.doubleface.grpc;

import io.doubleface.driver.Transport;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.driver.spi.BlockingClient;
import io.doubleface.driver.ShardException;
import io.doubleface.driver.ShardException.Kind;
import io.grpc.Status;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The blocking client against gRPC test leaves ({@link TestLeaves}) and a silent shard. */
class GrpcBlockingClientTest {

    private static final long LONG = TimeUnit.SECONDS.toNanos(30);
    private final List<AutoCloseable> closeables = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
    }

    private <T extends AutoCloseable> T closeLater(T c) {
        closeables.add(c);
        return c;
    }

    @Test
    void callAndCallAllGiveEachShardsReply() throws Exception {
        TestLeaves leaf = closeLater(TestLeaves.start(4, GrpcLoopClientTest.RECORDS, Transport.AUTO));
        GrpcDriver driver = closeLater(GrpcDriver.of(leaf.addresses(), GrpcLoopClientTest.GENEROUS));
        BlockingClient<GrpcCall<?, ?>> client = driver.openBlocking();
        assertEquals(TestLeaves.reply(1, 5, 200), client.call(1, TestLeaves.get(5, 200), LONG));
        assertEquals(TestLeaves.reply(3, 90, TestLeaves.MAX_SIZE),
                client.call(3, TestLeaves.get(90, TestLeaves.MAX_SIZE), LONG));
        ShardException bad = assertThrows(ShardException.class,
                () -> client.call(2, TestLeaves.fail(Status.Code.FAILED_PRECONDITION, "not now"), LONG));
        assertEquals(Kind.SHARD_ERROR, bad.kind(), bad.toString());
        assertTrue(bad.getMessage().contains("FAILED_PRECONDITION: not now"), bad.getMessage());
        int[] shards = {0, 1, 2, 3, 0};
        int[][] keys = {{1, 100}, {2, 300}, {4, 70_000}, {GrpcLoopClientTest.RECORDS, 10}, {99, 0}};
        List<GrpcCall<?, ?>> requests = new ArrayList<>();
        for (int[] k : keys) {
            requests.add(TestLeaves.get(k[0], k[1]));
        }
        Object[] replies = new Object[5];
        ShardException[] failures = new ShardException[5];
        client.callAll(shards, requests, LONG, new BlockingClient.Sink() {
            @Override
            public void onReply(int index, Object value) {
                assertNull(replies[index]);
                assertNull(failures[index]);
                replies[index] = value;
            }

            @Override
            public void onFailure(int index, ShardException cause) {
                assertNull(replies[index]);
                assertNull(failures[index]);
                failures[index] = cause;
            }
        });
        for (int i : new int[] {0, 1, 2, 4}) {
            assertEquals(TestLeaves.reply(shards[i], keys[i][0], keys[i][1]), replies[i],
                    "call " + i + ": " + failures[i]);
        }
        assertNull(replies[3]);
        assertEquals(Kind.SHARD_ERROR, failures[3].kind(), String.valueOf(failures[3]));
        assertTrue(failures[3].getMessage().contains("INVALID_ARGUMENT"), failures[3].getMessage());
        assertEquals(3, failures[3].shard());
    }

    @Test
    void silentShardTimesOutAndAStoppedOneIsUnavailable() throws Exception {
        SilentShard silent = closeLater(new SilentShard());
        TestLeaves leaf = closeLater(TestLeaves.start(1, GrpcLoopClientTest.RECORDS, Transport.AUTO));
        GrpcDriver driver = closeLater(GrpcDriver.of(List.of(silent.address(), leaf.addresses().get(0)),
                GrpcLoopClientTest.GENEROUS));
        BlockingClient<GrpcCall<?, ?>> client = driver.openBlocking();
        ShardException e = assertThrows(ShardException.class,
                () -> client.call(0, TestLeaves.get(1, 10), TimeUnit.MILLISECONDS.toNanos(200)));
        assertEquals(Kind.TIMEOUT, e.kind(), e.toString());
        // leaf shard 0 is the driver's shard 1
        assertEquals(TestLeaves.reply(0, 1, 10), client.call(1, TestLeaves.get(1, 10), LONG));
        leaf.stop();
        e = assertThrows(ShardException.class, () -> client.call(1, TestLeaves.get(1, 10), LONG));
        assertEquals(Kind.UNAVAILABLE, e.kind(), e.toString());
        ShardException[] failures = new ShardException[2];
        client.callAll(new int[] {0, 1}, List.<GrpcCall<?, ?>>of(TestLeaves.get(1, 10), TestLeaves.get(2, 10)),
                TimeUnit.MILLISECONDS.toNanos(300), new BlockingClient.Sink() {
                    @Override
                    public void onReply(int index, Object value) {
                        throw new AssertionError("reply to " + index + ": " + value);
                    }

                    @Override
                    public void onFailure(int index, ShardException cause) {
                        failures[index] = cause;
                    }
                });
        assertEquals(Kind.TIMEOUT, failures[0].kind(), failures[0].toString());
        assertEquals(Kind.UNAVAILABLE, failures[1].kind(), failures[1].toString());
        driver.close();
        e = assertThrows(ShardException.class, () -> client.call(1, TestLeaves.get(1, 10), LONG));
        assertEquals(Kind.CLOSED, e.kind());
        assertTrue(Duration.ofNanos(LONG).toSeconds() > 0);
    }
}
