package io.doubleface.tune;

import io.doubleface.model.Configuration;
import java.util.concurrent.TimeUnit;

/**
 * Decisions without a profile ({@link Decider#exploring()}): the adapter starts on the
 * anchor (the first candidate, assumed to sustain peak load) and, while the load stays in one
 * bucket, probes one unexplored candidate at a time until it has enough live samples; a probe is
 * abandoned at its first failed request, when its live p99 exceeds {@value #PROBE_ABORT_FACTOR}×
 * the anchor's, when the load leaves the bucket, or after {@value #PROBE_MAX_DWELLS} dwell times.
 * A load bucket with no live knowledge runs on the anchor. A saturated configuration is left for
 * the anchor. (docs/tuning.md, "Without a profile".)
 *
 * <p>Threading: the adapter thread only ({@link Decider}).
 */
final class ExploringDecider implements Decider {

    /** A probe whose live p99 exceeds this multiple of the anchor's is abandoned: {@value}. */
    static final double PROBE_ABORT_FACTOR = 2.0;
    /** A probe lasts at most this many dwell times: {@value}. */
    static final int PROBE_MAX_DWELLS = 20;

    /** The configuration being probed, or {@code null}. */
    private Configuration probe;
    private int probeBucket;
    private long probeStart;
    /** Per (choice, load bucket): until when it is not probed again there; allocated on the first decision. */
    private long[] rejectedUntil;

    @Override
    public Decision decide(Context ctx) {
        if (rejectedUntil == null) {
            rejectedUntil = new long[ctx.choices().size() * LiveLatency.BUCKETS];
        }
        Configuration current = ctx.active();
        Configuration anchor = ctx.anchor();
        if (ctx.saturated()) {
            // the offered load is unknown (it admits only what it serves): back to the anchor, and
            // do not come back to this one while the load stays
            if (current.equals(anchor)) {
                return null;
            }
            ctx.capSaturated(current);
            probe = null;
            return new Decision(anchor, LoadAdapter.Reason.SATURATED.label);
        }
        double l = ctx.load();
        int b = ctx.bucketOf(l);
        long now = ctx.now();
        long dwell = ctx.settings().dwell().toNanos();
        if (probe != null) {
            int pc = ctx.choices().indexOf(probe);
            boolean failed = ctx.liveErrors(probe, probeBucket) > 0;
            double pp = ctx.liveP99(probe, probeBucket);
            double pa = ctx.liveP99(anchor, probeBucket);
            boolean slow = !Double.isNaN(pp) && !Double.isNaN(pa) && pp > PROBE_ABORT_FACTOR * pa;
            boolean moved = Math.abs(b - probeBucket) > 1;
            boolean tooLong = now - probeStart > PROBE_MAX_DWELLS * Math.max(dwell, TimeUnit.MILLISECONDS.toNanos(10));
            if (failed || slow || (tooLong && Double.isNaN(pp)) || !probe.equals(current)) {
                if (failed || slow) {
                    rejectedUntil[pc * LiveLatency.BUCKETS + probeBucket] = Long.MAX_VALUE; // never again here
                } else {
                    rejectedUntil[pc * LiveLatency.BUCKETS + probeBucket] = now + 100 * Math.max(dwell, 1_000_000);
                }
                probe = null;
                return new Decision(anchor, LoadAdapter.Reason.PROBE_ABORT.label);
            }
            if (moved) {
                probe = null; // load moved on; what we learned stays
            } else if (Double.isNaN(pp)) {
                return null; // keep probing
            } else {
                probe = null; // learned enough
            }
        }
        // the best known configuration in this bucket (the anchor when nothing is known)
        Configuration best = ctx.bestFeasible(l, l);
        if (best == null) {
            best = anchor;
        }
        if (!ctx.feasible(current, l)) {
            return new Decision(best, LoadAdapter.Reason.INFEASIBLE.label);
        }
        if (!current.equals(anchor) && Double.isNaN(ctx.liveP99(current, b))) {
            // the load moved where nothing is known about the current one: back to safety
            return new Decision(best, LoadAdapter.Reason.UNKNOWN_LOAD.label);
        }
        if (!best.equals(current) && now - ctx.lastSwitch() >= dwell) {
            double pc = ctx.liveP99(current, b);
            double pb = ctx.liveP99(best, b);
            if (Double.isNaN(pc) || pb < pc * (1 - ctx.settings().hysteresis())) {
                return new Decision(best, LoadAdapter.Reason.BETTER.label);
            }
        }
        // explore: load steady for a dwell, anchor known here, an unexplored candidate left
        if (now - ctx.lastSwitch() >= dwell && now - ctx.loadStableSince() >= dwell && l > 0
                && !Double.isNaN(ctx.liveP99(anchor, b))) {
            for (int ci = 0; ci < ctx.choices().size(); ci++) {
                Configuration c = ctx.choices().get(ci);
                if (Double.isNaN(ctx.liveP99(c, b)) && now >= rejectedUntil[ci * LiveLatency.BUCKETS + b]
                        && ctx.feasible(c, l)) {
                    probe = c;
                    probeBucket = b;
                    probeStart = now;
                    return new Decision(c, LoadAdapter.Reason.PROBE.label);
                }
            }
        }
        return null;
    }

    @Override
    public String describe() {
        return "exploring";
    }
}
