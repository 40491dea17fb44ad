package io.doubleface.testing;


import io.doubleface.driver.spi.BlockingClient;
import io.doubleface.driver.spi.LoopClient;
import io.doubleface.driver.spi.ShardDriver;
import io.netty.channel.EventLoop;

/** A driver of {@code shards} shards that opens no client: for tests that drive replies by hand. */
public final class NoIoDriver implements ShardDriver<TestRead> {

    private final int shards;

    public NoIoDriver(int shards) {
        this.shards = shards;
    }

    @Override
    public int shardCount() {
        return shards;
    }

    @Override
    public String describe() {
        return "none://" + shards;
    }

    @Override
    public LoopClient<TestRead> openOn(EventLoop loop) {
        throw new UnsupportedOperationException("no I/O in this test");
    }

    @Override
    public BlockingClient<TestRead> openBlocking() {
        throw new UnsupportedOperationException("no I/O in this test");
    }

    @Override
    public void close() {}
}
