package io.doubleface.tune;

import io.doubleface.model.Configuration;

/**
 * μTune's decisions over a trained profile ({@link Decider#profileDriven()}): the lowest
 * predicted p99 among the feasible configurations.
 *
 * <p>A configuration other than the anchor (the peak-sustaining one) is a candidate at a load
 * only where it beats the anchor beyond the profile's noise ({@link Context#beyondNoise}: with
 * repeats, the ranges of the repeats' p99s do not overlap); one running without that licence goes
 * back to the anchor after a dwell ({@code noise}).
 *
 * <pre>
 *   saturated                    → the best one rated for more than the active one's capacity  (saturated)
 *   active infeasible            → at once, the best feasible at max(load, fast)             (infeasible)
 *   rising load past capacity × (1 + margin) → at once, the best feasible there, more capacity (rising)
 *   best ≥ {@value #FAR_FACTOR}× better and rated for more load, for a smoothing window → best   (far-better)
 *   best better by the hysteresis for a dwell, a dwell after the last switch → best          (better)
 *   active unlicensed at this load, for a dwell, a dwell after the last switch → best        (noise)
 * </pre>
 *
 * <p>Why each rule, with the runs that showed it: docs/tuning.md, "Decisions" and "Saturation".
 *
 * <p>Threading: the adapter thread only ({@link Decider}).
 */
final class ProfileDecider implements Decider {

    /**
     * An active configuration predicted this many times the best one's p99 is left after one
     * smoothing window instead of a dwell ({@code far-better}): {@value}.
     */
    static final double FAR_FACTOR = 3.0;

    /** Since when the best one has beaten the active one by the hysteresis; -1: it has not. */
    private long beatenSince = -1;
    /** Since when the best one has been {@value #FAR_FACTOR}× better and rated for more; -1: it has not. */
    private long farSince = -1;

    @Override
    public Decision decide(Context ctx) {
        return ctx.saturated() ? leaveSaturated(ctx) : decideOnLoad(ctx);
    }

    /**
     * Leaves a saturated configuration. It admits only what it serves, so the offered load is
     * unknown but at least the admitted one: move to the best configuration the profile rates for
     * more than the saturated one's profiled capacity, and cap the one left at the load it
     * admitted (so the adapter does not come back while the load stays). When nothing is rated
     * for more it stays, uncapped.
     */
    private Decision leaveSaturated(Context ctx) {
        Configuration current = ctx.active();
        double l = ctx.load();
        Profile profile = ctx.profile();
        double cap = profile.capacity(current);
        Configuration to = ctx.bestFeasible(Math.max(Math.max(l, ctx.fastLoad()), cap), l);
        if (to == null && profile.capacity(ctx.anchor()) > cap) {
            to = ctx.anchor();
        }
        if (to == null || to.equals(current)) {
            // nowhere better: stay, and do not cap it — a capped configuration with nowhere to go
            // is "infeasible", and leaving it for one rated lower made the adapter flap between a
            // draining doubleface and a saturating sip in a flash crowd (docs/tuning.md)
            return null;
        }
        ctx.capSaturated(current);
        beatenSince = -1;
        farSince = -1;
        return new Decision(to, LoadAdapter.Reason.SATURATED.label);
    }

    private Decision decideOnLoad(Context ctx) {
        Configuration current = ctx.active();
        double l = ctx.load();
        long now = ctx.now();
        if (!ctx.choices().contains(current) || !ctx.feasible(current, l)) {
            // failing live or over its capacity: leave at once, for one that is feasible at the fast
            // estimate too (on a real step up the count lags and would lead from one too-small
            // configuration to the next); when nothing is, the peak-sustaining one copes best
            beatenSince = -1;
            Configuration to = target(ctx, Math.max(l, ctx.fastLoad()), l);
            return new Decision(to == null ? ctx.anchor() : to, LoadAdapter.Reason.INFEASIBLE.label);
        }
        double rising = ctx.risingLoad();
        if (rising > l && rising > ctx.profile().capacity(current) * (1 + ctx.settings().margin())) {
            // a step up the count has not caught up with yet: leave now for a configuration rated
            // for it and for the fast estimate (the step may not have ended), before the backlog
            // builds (towards more capacity only). Past the capacity by
            // the margin, not merely within the margin of it: a short count's noise near capacity
            // would otherwise move the adapter off a configuration that carries the load
            Configuration to = target(ctx, Math.max(rising, ctx.fastLoad()), l);
            to = to == null ? ctx.anchor() : to;
            if (!to.equals(current) && ctx.profile().capacity(to) > ctx.profile().capacity(current)) {
                beatenSince = -1;
                farSince = -1;
                return new Decision(to, LoadAdapter.Reason.RISING.label);
            }
        }
        Configuration best = target(ctx, l, l);
        if (best == null || best.equals(current)) {
            beatenSince = -1;
            return null;
        }
        double pc = ctx.predictedP99(current, l);
        double pb = ctx.predictedP99(best, l);
        boolean better = Double.isNaN(pc) || pb < pc * (1 - ctx.settings().hysteresis());
        // away from the peak-sustaining configuration without evidence at this load (the load moved,
        // or live latencies raised it): back, after a dwell, even if its point estimate is lower
        boolean unlicensed = !licensed(ctx, current, l);
        if (!better && !unlicensed) {
            beatenSince = -1;
            farSince = -1;
            return null;
        }
        // beaten: move only once it has been beaten for a whole dwell (noise does not stay put)
        long dwell = ctx.settings().dwell().toNanos();
        if (beatenSince < 0) {
            beatenSince = now;
        }
        if (now - beatenSince >= dwell && now - ctx.lastSwitch() >= dwell) {
            beatenSince = -1;
            farSince = -1;
            return new Decision(best, better ? LoadAdapter.Reason.BETTER.label : LoadAdapter.Reason.NOISE.label);
        }
        // beaten FAR_FACTOR× over by one rated for more is not noise but a configuration past its
        // knee — typically one saturating below its profiled capacity, which admits only what it
        // serves, so the load estimate never reaches that capacity: leave once it has lasted a
        // smoothing window. Only towards more capacity: a move down (to a low-load specialist)
        // waits for the dwell like any other, else the estimate's noise on a steep profile curve
        // flaps between the two (docs/tuning.md, "Decisions")
        Profile profile = ctx.profile();
        if (!Double.isNaN(pc) && pb * FAR_FACTOR <= pc && profile.capacity(best) > profile.capacity(current)) {
            if (farSince < 0) {
                farSince = now;
            }
            if (now - farSince >= ctx.settings().smoothing().toNanos()) {
                beatenSince = -1;
                farSince = -1;
                return new Decision(best, LoadAdapter.Reason.FAR_BETTER.label);
            }
        } else {
            farSince = -1;
        }
        return null;
    }

    /**
     * The choice to run at {@code load}: the lowest predicted p99 among those feasible at
     * {@code feasibleAt} and {@linkplain #licensed licensed} there; {@code null} if none has a
     * prediction.
     */
    private static Configuration target(Context ctx, double feasibleAt, double load) {
        Configuration best = null;
        double bestP = Double.POSITIVE_INFINITY;
        for (Configuration c : ctx.choices()) {
            if (!ctx.feasible(c, feasibleAt) || !licensed(ctx, c, load)) {
                continue;
            }
            double p = ctx.predictedP99(c, load);
            if (!Double.isNaN(p) && p < bestP) {
                best = c;
                bestP = p;
            }
        }
        return best;
    }

    /**
     * Whether the adapter may run {@code config} at {@code load}: it is the anchor (the
     * peak-sustaining configuration), or beats the anchor there beyond the profile's noise
     * ({@link Context#beyondNoise}), or the anchor cannot be compared (not feasible there, or
     * nothing known of it).
     */
    private static boolean licensed(Context ctx, Configuration config, double load) {
        Configuration anchor = ctx.anchor();
        if (config.equals(anchor) || !ctx.feasible(anchor, load) || Double.isNaN(ctx.predictedP99(anchor, load))) {
            return true;
        }
        return ctx.beyondNoise(config, anchor, load);
    }

    @Override
    public String describe() {
        return "profile";
    }
}
