package io.doubleface.api;

import io.doubleface.driver.Command;
import io.doubleface.driver.spi.ShardDriver;
import java.util.Objects;

/**
 * A named backend of a server: one driver over its own shard list, e.g. {@code "cache"} on twenty
 * Redis servers and {@code "posts"} on four MongoDB shards. Services add calls on it with
 * {@link FanoutPlan#call}; the type parameter is the driver's command family, so a backend accepts
 * exactly the commands its store understands.
 *
 * <p>Obtained from {@code FanoutServer.Builder#backend(String, ShardDriver)}, which also decides
 * whether the server closes the driver; a backend belongs to the server that created it. Under the
 * event-loop models each backend has its own per-loop clients, under the thread models its own
 * blocking client. Immutable and thread-safe.
 *
 * @param <C> the driver's command type
 */
public final class Backend<C extends Command<?>> {

    private final String name;
    private final int index;
    private final ShardDriver<C> driver;
    private final Object owner;
    private final int shardCount;

    /**
     * For server builders only: applications get backends from {@code FanoutServer.Builder#backend}.
     *
     * @param name the backend's name, not {@code null}
     * @param index the backend's position in its server (0, 1, …)
     * @param driver the backend's driver, not {@code null}; its shard count is read once, here
     * @param owner the server (builder) the backend belongs to
     */
    public Backend(String name, int index, ShardDriver<C> driver, Object owner) {
        this.name = Objects.requireNonNull(name, "name");
        this.index = index;
        this.driver = Objects.requireNonNull(driver, "driver");
        this.owner = Objects.requireNonNull(owner, "owner");
        this.shardCount = driver.shardCount(); // fixed for a driver's life
    }

    /** {@return the backend's name, as given to the builder (used in logs, stats and failure messages)} */
    public String name() {
        return name;
    }

    /** {@return the number of shards (at least 1); shard ids are {@code 0 .. shardCount()-1}} */
    public int shardCount() {
        return shardCount;
    }

    /**
     * The shard that serves {@code command} when the call is routed by the key it carries
     * ({@link FanoutPlan#call(Backend, Command, ReplyHandler)}): what the driver says.
     *
     * @param command the command, not {@code null}
     * @return the shard, {@code 0 .. shardCount()-1}
     * @throws IllegalArgumentException if the driver addresses its shards by index only, or the
     *     command carries no key (the message says which)
     */
    public int shardFor(C command) {
        java.util.Objects.requireNonNull(command, "command");
        try {
            return driver.shardFor(command);
        } catch (UnsupportedOperationException e) {
            throw new IllegalArgumentException("backend '" + name + "': " + e.getMessage(), e);
        }
    }

    /** {@return the shard list, e.g. {@code redis://127.0.0.1:7201-7220}} */
    public String describe() {
        return driver.describe();
    }

    /** {@return the driver (for the framework's models)} */
    public ShardDriver<C> driver() {
        return driver;
    }

    /** {@return the position of this backend in its server, 0, 1, … (for the framework's models)} */
    public int index() {
        return index;
    }

    /**
     * Whether this backend was created by {@code owner}.
     *
     * @param owner the server (builder) to check; compared by identity
     * @return {@code true} if {@code owner} is the owner given at construction
     */
    public boolean belongsTo(Object owner) {
        return this.owner == owner;
    }

    @Override
    public String toString() {
        return name + " (" + driver.describe() + ")";
    }
}
