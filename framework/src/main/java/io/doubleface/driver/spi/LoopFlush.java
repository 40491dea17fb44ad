package io.doubleface.driver.spi;

import io.doubleface.driver.FlushMode;
import io.netty.channel.EventLoop;
import java.util.Map;
import java.util.Objects;
import java.util.WeakHashMap;

/**
 * The {@link FlushMode} of one event loop, read by every {@link PipelinedLoopClient} on that
 * loop at each send and set by the server for all of its loops ({@code FanoutServer.flushMode},
 * {@code --flush-mode}, {@code PUT /admin/knobs?flush-mode=}).
 *
 * <p>Why per loop: a driver's clients know their loop, not the server, and a driver of another
 * module (the YCSB service's OP_MSG driver) builds its {@code PipelinedLoopClient}s itself; keying
 * the policy by the loop reaches them all without a driver hook. A loop nobody set a policy for
 * flushes per iteration.
 *
 * <p>Switching never loses a call: each send reads the policy once and every state it leaves a
 * connection in is flushed whatever the policy becomes — a connection marked for the end of the
 * iteration is flushed by the iteration's tail task, a partial batch by its timer (armed while any
 * call waits in one). So the switch is a plain volatile write, from any thread, and takes effect
 * at each loop's next send.
 *
 * <p>Threading: {@link #of} and {@link #set} from any thread (a synchronized weak map: a loop's
 * entry goes with the loop); {@link #mode()} is a volatile read.
 */
public final class LoopFlush {

    private static final Map<EventLoop, LoopFlush> BY_LOOP = new WeakHashMap<>();

    private volatile FlushMode policy = FlushMode.PER_ITERATION;

    private LoopFlush() {}

    /**
     * {@return the flush setting of {@code loop}, made (per iteration) on first use} Clients look it
     * up once, when they are made.
     *
     * @param loop the event loop
     */
    public static LoopFlush of(EventLoop loop) {
        Objects.requireNonNull(loop, "loop");
        synchronized (BY_LOOP) {
            return BY_LOOP.computeIfAbsent(loop, l -> new LoopFlush());
        }
    }

    /**
     * Sets the flush mode of {@code loop}: clients on it use it from their next send.
     *
     * @param loop the event loop
     * @param policy the policy, not {@code null}
     */
    public static void set(EventLoop loop, FlushMode policy) {
        of(loop).policy = Objects.requireNonNull(policy, "policy");
    }

    /** {@return the current policy} */
    public FlushMode mode() {
        return policy;
    }
}
