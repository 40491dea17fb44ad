package io.doubleface.services.musuite;

import io.doubleface.driver.spi.ShardAddresses;
import io.grpc.BindableService;
import io.grpc.Server;
import io.grpc.netty.NettyServerBuilder;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;

/**
 * The leaves of a μSuite service in one process: {@code leaves} plain grpc-java servers, leaf
 * {@code i} on {@code basePort + i} (or any free port each when {@code basePort} is 0), each
 * serving the service object the factory made for it. The leaves know nothing of doubleface; in
 * production each would be its own process, here one process hosts them all (the CLI's
 * {@code doubleface leaf hdsearch ...}, the tests).
 *
 * <p>Threading: {@link #start} and {@link #close} from any thread; {@link #stop} stops one leaf
 * (a test's failed shard). The servers use grpc-java's default executor and event loops.
 */
public final class LeafServers implements AutoCloseable {

    /** Longest {@link #close()} waits for each server to terminate: {@value} ms. */
    static final long CLOSE_WAIT_MILLIS = 5_000;

    private final String host;
    private final List<Server> servers;

    private LeafServers(String host, List<Server> servers) {
        this.host = host;
        this.servers = servers;
    }

    /**
     * Starts {@code leaves} servers.
     *
     * @param host the address to bind, e.g. {@code 127.0.0.1}
     * @param basePort port of leaf 0 (leaf i on basePort + i), or 0 for any free ports
     * @param leaves how many leaves, {@code >= 1}
     * @param service the service object of leaf {@code i}
     * @return the running leaves
     * @throws IllegalArgumentException for a bad count or port range
     * @throws IllegalStateException if a port cannot be bound (the leaves started so far are stopped)
     */
    public static LeafServers start(String host, int basePort, int leaves, IntFunction<BindableService> service) {
        if (leaves < 1) {
            throw new IllegalArgumentException("leaves: " + leaves + " (expected: > 0)");
        }
        if (basePort < 0 || (basePort > 0 && basePort + leaves - 1 > 65535)) {
            throw new IllegalArgumentException("basePort: " + basePort + " with " + leaves
                    + " leaves (expected: 0, or basePort + leaves - 1 <= 65535)");
        }
        List<Server> servers = new ArrayList<>(leaves);
        LeafServers out = new LeafServers(host, servers);
        try {
            for (int i = 0; i < leaves; i++) {
                int port = basePort == 0 ? 0 : basePort + i;
                Server s = NettyServerBuilder.forAddress(new InetSocketAddress(host, port))
                        .addService(service.apply(i)).build();
                try {
                    servers.add(s.start());
                } catch (IOException e) {
                    s.shutdownNow();
                    throw new IllegalStateException("leaf " + i + ": cannot listen on " + host + ":" + port + ": "
                            + e.getMessage(), e);
                }
            }
        } catch (RuntimeException e) {
            out.close();
            throw e;
        }
        return out;
    }

    /** {@return the number of leaves} */
    public int size() {
        return servers.size();
    }

    /** {@return the leaves' addresses, leaf i at index i} */
    public List<InetSocketAddress> addresses() {
        List<InetSocketAddress> out = new ArrayList<>(servers.size());
        for (Server s : servers) {
            out.add(new InetSocketAddress(host, s.getPort()));
        }
        return out;
    }

    /** {@return the leaf list for {@code GrpcDriver.of}, e.g. {@code grpc://127.0.0.1:9001-9004}} */
    public String uri() {
        return ShardAddresses.describe("grpc", addresses());
    }

    /**
     * Stops one leaf at once (its calls in flight fail); the others keep serving.
     *
     * @param leaf the leaf's index
     */
    public void stop(int leaf) {
        Server s = servers.get(leaf);
        s.shutdownNow();
        await(s);
    }

    /** Stops every leaf. Idempotent. */
    @Override
    public void close() {
        for (Server s : servers) {
            s.shutdownNow();
        }
        for (Server s : servers) {
            await(s);
        }
    }

    private static void await(Server s) {
        try {
            s.awaitTermination(CLOSE_WAIT_MILLIS, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** {@return e.g. {@code listening on 127.0.0.1:9001-9004 (4 leaves)}} */
    public String listeningMessage() {
        return "listening on " + uri().substring("grpc://".length()) + " (" + servers.size()
                + (servers.size() == 1 ? " leaf)" : " leaves)");
    }
}
