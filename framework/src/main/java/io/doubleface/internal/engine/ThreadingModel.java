package io.doubleface.internal.engine;

import io.doubleface.model.Configuration;
import io.netty.channel.EventLoop;
import java.util.List;

/**
 * A threading model: where a fanout request's plan, shard I/O, onReply and merge run. One
 * interface, one implementation per model ({@link ThreadingModels#create}); the service code is
 * the same under all of them.
 *
 * <p>Lifecycle: created (and its threads started) once when its configuration is first
 * activated or prepared, and then its clients opened and connecting to every shard (warm start;
 * the engine's readiness waits for those of the active configuration); {@link #activate()} / {@link #park()} on every switch to / away from it — parked
 * models keep their threads and connections, so in-flight requests finish under the model they
 * started with; {@link #close()} when the server stops.
 *
 * <p>Threading: {@link #execute} is called on the upstream loop of the request's connection,
 * concurrently from all upstream loops. {@link #activate()}, {@link #park()} and
 * {@link #close()} are called by the switching thread, serialized by the caller.
 */
public interface ThreadingModel extends AutoCloseable {

    /** The configuration this model was built for. */
    Configuration configuration();

    /**
     * The upstream loops on which connections accepted while this model is active are registered
     * (a prefix of the server's I/O loops).
     */
    List<EventLoop> frontendLoops();

    /**
     * Runs one admitted request. Must lead to exactly one answer via the exchange (merge, failure
     * or deadline) and must not block the calling loop.
     */
    void execute(FanoutExchange<?, ?, ?> exchange);

    /**
     * Sends the calls of the exchange's current round after a merge planned another one (a
     * multi-stage request). Called on the thread that merged, which is the thread the model runs
     * merge on; every outcome then goes through the exchange as for the first round.
     */
    void sendRound(FanoutExchange<?, ?, ?> exchange);

    /** Loop groups this model owns besides the server's I/O loops (backend loops, reactors), for stats. */
    default List<io.doubleface.internal.loop.LoopGroup> ownLoopGroups() {
        return List.of();
    }

    /** This model becomes the active one (e.g. its loops start busy-polling if configured). */
    void activate();

    /** Another model became active; keep threads and connections, stop spinning. */
    void park();

    /** Stops the model's threads and closes its connections. */
    @Override
    void close();
}
