package io.doubleface.driver.spi;

import io.netty.util.concurrent.FastThreadLocal;
import java.util.List;
import java.util.Map;

/**
 * The trace context of the shard calls a thread is sending right now: for each call, the headers
 * (W3C {@code traceparent}, {@code tracestate}, as the server's OpenTelemetry propagators write
 * them) that carry the call's {@code CLIENT} span to the shard. Set by the threading models around
 * {@link LoopClient#send}, {@link BlockingClient#call} and {@link BlockingClient#callAll} only when
 * the server has OpenTelemetry on; a driver whose protocol can carry headers (gRPC metadata) reads
 * them while it starts the call.
 *
 * <p>Why a thread-local and not a parameter of {@code send}: the drivers' interfaces stay as they
 * are for every protocol that cannot carry headers, and a send is synchronous — the context is
 * set just before and cleared just after, on the same thread, so it never leaks to a later call.
 *
 * <p>Threading: per thread ({@link FastThreadLocal}, cheap on the event loops).
 */
public final class CallTrace {

    private static final FastThreadLocal<List<Map<String, String>>> CURRENT = new FastThreadLocal<>();

    private CallTrace() {}

    /**
     * {@return the headers of call {@code index} of the batch being sent on this thread (0 for
     * {@code send} and {@code call}, the index in the lists of {@code callAll}), or {@code null}}
     *
     * @param index the call's index in the batch
     */
    public static Map<String, String> headers(int index) {
        if (!CURRENT.isSet()) {
            return null;
        }
        List<Map<String, String>> l = CURRENT.get();
        return l == null || index < 0 || index >= l.size() ? null : l.get(index);
    }

    /**
     * Sets the headers of the calls about to be sent on this thread; {@link #clear} after the send.
     *
     * @param perCall the headers of each call of the batch, by index ({@code null} entries: none)
     */
    public static void set(List<Map<String, String>> perCall) {
        CURRENT.set(perCall);
    }

    /** Clears what {@link #set} set. */
    public static void clear() {
        CURRENT.remove();
    }
}
