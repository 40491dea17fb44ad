package io.doubleface.tune;

import io.doubleface.model.Configuration;
import java.util.List;

/**
 * What a {@link Decider} sees at one decision of a {@link LoadAdapter}: the monitor's
 * readings and the latency table at {@link #now}, the active configuration and the time of the
 * adapter's last switch. One instance per adapter, reused for every decision (no allocation).
 *
 * <p>Threading: the adapter thread only; the adapter sets {@link #now} before each decision and
 * {@link #lastSwitch} at each switch.
 */
final class DeciderContext implements Decider.Context {

    private final LoadAdapter.Switcher switcher;
    private final TuneSettings settings;
    private final List<Configuration> choices;
    private final Configuration anchor;
    private final long dwellNanos;
    private final LoadMonitor monitor;
    private final LatencyTable table;
    /** The time of the decision being taken. */
    long now;
    /** The time of the adapter's last switch; far in the past before the first. */
    long lastSwitch = Long.MIN_VALUE / 2;

    DeciderContext(LoadAdapter.Switcher switcher, TuneSettings settings, LoadMonitor monitor, LatencyTable table) {
        this.switcher = switcher;
        this.settings = settings;
        this.choices = settings.choices();
        this.anchor = settings.initial();
        this.dwellNanos = settings.dwell().toNanos();
        this.monitor = monitor;
        this.table = table;
    }
    @Override
    public long now() {
        return now;
    }

    @Override
    public Configuration active() {
        return switcher.active();
    }

    @Override
    public List<Configuration> choices() {
        return choices;
    }

    @Override
    public Configuration anchor() {
        return anchor;
    }

    @Override
    public TuneSettings settings() {
        return settings;
    }

    @Override
    public Profile profile() {
        return table.profile();
    }

    @Override
    public double load() {
        return monitor.load();
    }

    @Override
    public double fastLoad() {
        return monitor.fastLoad();
    }

    @Override
    public double risingLoad() {
        return monitor.risingLoad();
    }

    @Override
    public double utilization() {
        return monitor.utilization();
    }

    @Override
    public boolean saturated() {
        return choices.contains(switcher.active()) && monitor.saturated(now - lastSwitch, dwellNanos);
    }

    @Override
    public int bucketOf(double load) {
        return LiveLatency.bucket(load);
    }

    @Override
    public long loadStableSince() {
        return monitor.stableSince();
    }

    @Override
    public long lastSwitch() {
        return lastSwitch;
    }

    @Override
    public double predictedP99(Configuration config, double load) {
        return table.predictedP99(config, load);
    }

    @Override
    public boolean beyondNoise(Configuration x, Configuration than, double load) {
        return table.beyondNoise(x, than, load, settings().hysteresis());
    }

    @Override
    public boolean feasible(Configuration config, double load) {
        return table.feasible(config, load, now);
    }

    @Override
    public Configuration bestFeasible(double feasibleAt, double load) {
        return table.bestFeasible(feasibleAt, load, now);
    }

    @Override
    public double liveP99(Configuration config, int bucket) {
        return table.liveP99(config, bucket);
    }

    @Override
    public long liveSamples(Configuration config, int bucket) {
        return table.liveSamples(config, bucket);
    }

    @Override
    public long liveErrors(Configuration config, int bucket) {
        return table.liveErrors(config, bucket);
    }

    @Override
    public void capSaturated(Configuration config) {
        table.capSaturated(config, monitor.load(), now);
    }
}
