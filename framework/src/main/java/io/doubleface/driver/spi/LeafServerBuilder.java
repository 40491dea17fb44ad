package io.doubleface.driver.spi;

/**
 * What every leaf-server builder of a driver takes: how many shards, the port of the first (shard
 * {@code i} listens on {@code basePort + i}) and the address to bind. A leaf server hosts a store's
 * shards in one process for tests, demos and experiments (the KV leaf, the MongoDB test leaf, a gRPC
 * leaf of your own); extending this keeps their options, defaults and error messages alike.
 *
 * <p>A subclass adds its own options and a {@code start()} that calls {@link #checkPortRange()}
 * before binding and reads the values through the getters.
 *
 * <p>Threading: not thread-safe, like any builder.
 *
 * @param <B> the concrete builder, returned by the setters so that calls chain
 */
public abstract class LeafServerBuilder<B extends LeafServerBuilder<B>> {

    /** Default address to bind: {@value}. */
    public static final String DEFAULT_HOST = "127.0.0.1";

    private final int maxShards;
    private int shards = 1;
    private int basePort;
    private String host = DEFAULT_HOST;

    /**
     * Creates a builder with 1 shard, base port 0 (ephemeral ports) and host {@value #DEFAULT_HOST}.
     *
     * @param maxShards the most shards the leaf hosts, {@code > 0}
     */
    protected LeafServerBuilder(int maxShards) {
        if (maxShards < 1) {
            throw new IllegalArgumentException("maxShards: " + maxShards + " (expected: > 0)");
        }
        this.maxShards = maxShards;
    }

    /** {@return this builder as its concrete type} */
    @SuppressWarnings("unchecked")
    private B self() {
        return (B) this;
    }

    /**
     * Sets the number of shards; default 1.
     *
     * @param shards {@code 1 ..} the leaf's most shards
     * @return this builder
     * @throws IllegalArgumentException if {@code shards} is out of range
     */
    public B shards(int shards) {
        if (shards < 1 || shards > maxShards) {
            throw new IllegalArgumentException("shards: " + shards + " (expected: 1.." + maxShards + ")");
        }
        this.shards = shards;
        return self();
    }

    /**
     * Sets the port of shard 0 (shard i listens on basePort+i); default 0.
     *
     * @param basePort {@code 1 .. 65535} (with {@code basePort + shards - 1 <= 65535}, checked at
     *     start), or 0 for ephemeral ports (the leaf tells which it got)
     * @return this builder
     * @throws IllegalArgumentException if {@code basePort} is out of range
     */
    public B basePort(int basePort) {
        if (basePort < 0 || basePort > 65535) {
            throw new IllegalArgumentException("basePort: " + basePort + " (expected: 0..65535)");
        }
        this.basePort = basePort;
        return self();
    }

    /**
     * Sets the address to bind; default {@value #DEFAULT_HOST}.
     *
     * @param host a host name or IP address, non-empty
     * @return this builder
     * @throws IllegalArgumentException if {@code host} is {@code null} or empty
     */
    public B host(String host) {
        if (host == null || host.isEmpty()) {
            throw new IllegalArgumentException("host: '" + host + "' (expected: a host name or address)");
        }
        this.host = host;
        return self();
    }

    /** {@return the number of shards} */
    public int shards() {
        return shards;
    }

    /** {@return the port of shard 0, or 0 for ephemeral ports} */
    public int basePort() {
        return basePort;
    }

    /** {@return the address to bind} */
    public String host() {
        return host;
    }

    /**
     * Checks that the last shard's port exists: {@code basePort + shards - 1 <= 65535}. Call it in
     * {@code start()}, before binding; the setters alone cannot, as either may be set first.
     *
     * @throws IllegalArgumentException if it does not
     */
    protected final void checkPortRange() {
        if (basePort != 0 && basePort + shards - 1 > 65535) {
            throw new IllegalArgumentException("basePort: " + basePort + " with " + shards
                    + " shards (expected: basePort + shards - 1 <= 65535)");
        }
    }
}
