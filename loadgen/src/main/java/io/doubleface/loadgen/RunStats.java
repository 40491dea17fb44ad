package io.doubleface.loadgen;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * What the event loops record during one run, read by the run's coordinating thread.
 *
 * <p>Threading: every method may be called from any thread. The recorders are HdrHistogram
 * {@link Recorder}s (wait-free concurrent recording, one interval reader: the coordinator);
 * counters are {@link LongAdder}s, so loops do not contend on a shared cache line.
 */
final class RunStats {

    /** HdrHistogram precision: {@value} significant digits. */
    static final int DIGITS = 3;

    /** Latency from the intended send time to the end of the response, µs; measured requests only. */
    final Recorder latency = new Recorder(DIGITS);
    /**
     * Latency per mix template, indexed like {@link RequestMix#templates()}: the same values as
     * {@link #latency}, recorded after it. {@code null} when the mix has one template (nothing to
     * split, nothing to pay).
     */
    final Recorder[] classLatency;
    /**
     * The same latencies split by answer: status below 400 ({@code ok}, read per interval, before
     * {@link #latency}) or 400 and above ({@code failed}, read once at the end).
     */
    final Recorder okLatency = new Recorder(DIGITS);
    final Recorder failedLatency = new Recorder(DIGITS);
    /** Actual dispatch time minus intended send time, µs; measured requests only. */
    final Recorder sendLag = new Recorder(DIGITS);

    /** Measured requests whose intended time came (open loop) or that were sent (closed loop). */
    final LongAdder scheduled = new LongAdder();
    /** Measured requests written to a connection before the end of the measured window. */
    final LongAdder sent = new LongAdder();
    /** Every request written, warm-up included (progress line). */
    final LongAdder allSent = new LongAdder();
    /** Measured requests sent again after their connection closed before any of the response ({@link Connection#mayResend}). */
    final LongAdder resent = new LongAdder();
    /** Measured requests that waited for a free connection (the connection limit was reached). */
    final LongAdder connectionWaits = new LongAdder();
    final LongAdder[] errors = new LongAdder[ErrorKind.values().length];
    /** Requests dispatched but not yet answered or failed (queued, in flight). */
    final AtomicInteger outstanding = new AtomicInteger();
    final AtomicInteger connections = new AtomicInteger();
    final AtomicInteger maxConnections = new AtomicInteger();
    /** Set by the first successful connect; a connect failure before it ends the run. */
    final AtomicBoolean everConnected = new AtomicBoolean();
    /** Measured requests left under {@code --max-requests}. */
    final AtomicLong budget;

    RunStats(long maxRequests, int templates) {
        if (templates >= 2) {
            classLatency = new Recorder[templates];
            for (int i = 0; i < templates; i++) {
                classLatency[i] = new Recorder(DIGITS);
            }
        } else {
            classLatency = null;
        }
        for (int i = 0; i < errors.length; i++) {
            errors[i] = new LongAdder();
        }
        budget = new AtomicLong(maxRequests);
    }

    void error(ErrorKind kind) {
        errors[kind.ordinal()].increment();
    }

    /** Takes one measured request from the budget; false when it is used up. */
    boolean take() {
        return budget.getAndDecrement() > 0;
    }

    /**
     * The per-template latency recorded so far, read once at the end of the run (a fresh histogram
     * per template: {@link Recorder#getIntervalHistogram()} since the start), or {@code null} for a
     * single-template mix. Coordinator only (a {@link Recorder} has one interval reader).
     */
    Histogram[] classTotals() {
        if (classLatency == null) {
            return null;
        }
        Histogram[] h = new Histogram[classLatency.length];
        for (int i = 0; i < h.length; i++) {
            h[i] = classLatency[i].getIntervalHistogram();
        }
        return h;
    }

    void connectionOpened() {
        int n = connections.incrementAndGet();
        maxConnections.accumulateAndGet(n, Math::max);
    }
}
