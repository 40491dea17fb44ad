package io.doubleface.grpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.api.ShardRequest;
import io.doubleface.driver.BlockingClient;
import io.doubleface.driver.ShardException;
import io.doubleface.driver.ShardException.Kind;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The blocking client against real gRPC leaves and a silent shard. */
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

    private static byte[] bytes(ByteBuf b) {
        try {
            return ByteBufUtil.getBytes(b);
        } finally {
            b.release();
        }
    }

    @Test
    void callAndCallAllGiveTheCanonicalReplies() throws Exception {
        GrpcLeafServer leaf = closeLater(GrpcLeafServer.builder().shards(4).records(GrpcLoopClientTest.RECORDS).start());
        GrpcDriver driver = closeLater(new GrpcDriver(leaf.addresses(), GrpcLoopClientTest.GENEROUS));
        BlockingClient client = driver.openBlocking();
        assertArrayEquals(GrpcLoopClientTest.expected(ShardRequest.readField(5, 2)),
                bytes((ByteBuf) client.call(1, ShardRequest.readField(5, 2), LONG)));
        assertArrayEquals(GrpcLoopClientTest.expected(ShardRequest.scan(90, 20)),
                bytes((ByteBuf) client.call(3, ShardRequest.scan(90, 20), LONG)));
        int[] shards = {0, 1, 2, 3, 0};
        ShardRequest[] requests = {ShardRequest.readRecord(1), ShardRequest.readField(2, 3), ShardRequest.scan(4, 7),
            ShardRequest.readRecord(GrpcLoopClientTest.RECORDS), ShardRequest.readRecord(99)};
        byte[][] replies = new byte[5][];
        ShardException[] failures = new ShardException[5];
        client.callAll(shards, java.util.Arrays.asList(requests), LONG, new BlockingClient.Sink() {
            @Override
            public void onReply(int index, Object value) {
                ByteBuf reply = (ByteBuf) value;
                assertEquals(null, replies[index]);
                replies[index] = bytes(reply);
            }

            @Override
            public void onFailure(int index, ShardException cause) {
                assertEquals(null, failures[index]);
                failures[index] = cause;
            }
        });
        for (int i : new int[] {0, 1, 2, 4}) {
            assertArrayEquals(GrpcLoopClientTest.expected(requests[i]), replies[i], "call " + i + ": " + failures[i]);
        }
        assertEquals(Kind.SHARD_ERROR, failures[3].kind(), String.valueOf(failures[3]));
    }

    @Test
    void silentShardTimesOutAndAStoppedOneIsUnavailable() throws Exception {
        SilentShard silent = closeLater(new SilentShard());
        GrpcLeafServer leaf = GrpcLeafServer.builder().shards(1).records(GrpcLoopClientTest.RECORDS).start();
        GrpcDriver driver = closeLater(new GrpcDriver(List.of(silent.address(), leaf.addresses().get(0)),
                GrpcLoopClientTest.GENEROUS));
        BlockingClient client = driver.openBlocking();
        ShardException e = assertThrows(ShardException.class,
                () -> client.call(0, ShardRequest.readRecord(1), TimeUnit.MILLISECONDS.toNanos(200)));
        assertEquals(Kind.TIMEOUT, e.kind(), e.toString());
        assertArrayEquals(GrpcLoopClientTest.expected(ShardRequest.readRecord(1)),
                bytes((ByteBuf) client.call(1, ShardRequest.readRecord(1), LONG)));
        leaf.close();
        e = assertThrows(ShardException.class, () -> client.call(1, ShardRequest.readRecord(1), LONG));
        assertEquals(Kind.UNAVAILABLE, e.kind(), e.toString());
        ShardException[] failures = new ShardException[2];
        client.callAll(new int[] {0, 1}, java.util.List.of(ShardRequest.readRecord(1), ShardRequest.readRecord(2)),
                TimeUnit.MILLISECONDS.toNanos(300), new BlockingClient.Sink() {
                    @Override
                    public void onReply(int index, Object value) {
                ByteBuf reply = (ByteBuf) value;
                        reply.release();
                        throw new AssertionError("reply to " + index);
                    }

                    @Override
                    public void onFailure(int index, ShardException cause) {
                        failures[index] = cause;
                    }
                });
        assertEquals(Kind.TIMEOUT, failures[0].kind(), failures[0].toString());
        assertEquals(Kind.UNAVAILABLE, failures[1].kind(), failures[1].toString());
        driver.close();
        e = assertThrows(ShardException.class, () -> client.call(1, ShardRequest.readRecord(1), LONG));
        assertEquals(Kind.CLOSED, e.kind());
        assertTrue(Duration.ofNanos(LONG).toSeconds() > 0);
    }
}
