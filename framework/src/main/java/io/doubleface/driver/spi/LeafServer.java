package io.doubleface.driver.spi;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The base of a driver's leaf server (the KV leaf, the MongoDB test leaf, a gRPC leaf of your own):
 * its shards, the address they are bound to and the port of each, as the drivers take them. A
 * subclass binds shard {@code i} and reports its port with {@link #bound}; it owns its loops and
 * closes them in {@link #close()}.
 *
 * <p>Threading: the accessors are safe from any thread once the constructor of the subclass has
 * bound every shard.
 */
public abstract class LeafServer implements AutoCloseable {

    private final String host;
    private final int[] ports;

    /**
     * Takes the shard count and the address to bind from the builder.
     *
     * @param b the leaf server's builder
     */
    protected LeafServer(LeafServerBuilder<?> b) {
        this.host = b.host();
        this.ports = new int[b.shards()];
    }

    /**
     * Records the port shard {@code shard} is bound to.
     *
     * @param shard the shard, {@code 0 .. shardCount()-1}
     * @param port its bound port
     */
    protected final void bound(int shard, int port) {
        ports[shard] = port;
    }

    /** {@return the number of shards} */
    public int shardCount() {
        return ports.length;
    }

    /**
     * The port shard {@code shard} listens on.
     *
     * @param shard the shard, {@code 0 .. shardCount()-1}
     * @return the bound port (the one the OS chose, with a base port of 0)
     * @throws IndexOutOfBoundsException if there is no such shard
     */
    public int port(int shard) {
        Objects.checkIndex(shard, ports.length);
        return ports[shard];
    }

    /** {@return the bound ports, indexed by shard (a copy)} */
    public int[] ports() {
        return ports.clone();
    }

    /** {@return the address the shards are bound to} */
    public String host() {
        return host;
    }

    /** {@return the shards' addresses, indexed by shard (a new list): what the store's driver takes} */
    public List<InetSocketAddress> addresses() {
        List<InetSocketAddress> a = new ArrayList<>(ports.length);
        for (int p : ports) {
            a.add(new InetSocketAddress(host, p));
        }
        return a;
    }

    /** {@return {@code "N shard"} or {@code "N shards"}, for a subclass's description} */
    protected final String shardsLabel() {
        return ports.length + (ports.length == 1 ? " shard" : " shards");
    }

    /** Stops every shard and the loops that serve them. */
    @Override
    public abstract void close();
}
