package io.doubleface.jmh.tune;

import io.doubleface.jmh.BenchmarkBase;
import io.doubleface.model.Configuration;
import io.doubleface.tune.LoadAdapter;
import io.doubleface.tune.LoadDetector;
import io.doubleface.tune.TuneStrategy;
import io.doubleface.tune.TuneSettings;
import java.util.SplittableRandom;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Threads;

/**
 * The load detectors ({@code ring-N}: event-based, {@code window-5ms}: fixed windows).
 *
 * <ul>
 *   <li>{@code arrival}: cost of recording one arrival, the work done on the request path at
 *       admission (target: under 20 ns), one thread; {@code arrivalTwoThreads}: the same with two
 *       threads recording into one detector, as two I/O loops do; {@code arrivalWithClock}
 *       includes the {@link System#nanoTime()} the engine takes.</li>
 *   <li>{@code adapterAdmitted}, {@code adapterAdmittedTwoThreads}: the whole admission hook of the
 *       load adapter ({@link LoadAdapter#admitted}: the detector plus the admission count the
 *       adapter caps its estimate with).</li>
 *   <li>{@code rate}: one estimate (the adapter thread's work per decision).</li>
 *   <li>{@code detectStep}: one simulated step from 100 to 8,000 req/s with Poisson arrivals on a
 *       synthetic clock (no sleeping), estimating after every arrival until the estimate reaches
 *       4,000 req/s. Its time is simulation cost and means nothing; read the auxiliary counters:
 *       {@code stepArrivals / steps} = mean arrivals at the new rate until detection,
 *       {@code stepMicros / steps} = mean detection delay in (simulated) µs.</li>
 * </ul>
 *
 * <p>Run: {@code java -jar jmh/target/benchmarks.jar 'tune.LoadDetectorBenchmark' -f 1 -wi 3 -w 2s -i 5 -r 2s -rf json -rff tune.json};
 * smoke: {@code … -f 1 -wi 0 -i 1 -r 1s}.
 */
@State(Scope.Benchmark)
public class LoadDetectorBenchmark extends BenchmarkBase {

    @Param({"ring-8", "ring-16", "ring-64", "window-5ms"})
    public String detector;

    private LoadDetector shared;
    private LoadAdapter adapter;

    @Setup(Level.Iteration)
    public void setUp() {
        shared = LoadDetector.create(detector);
        adapter = new LoadAdapter(new LoadAdapter.Switcher() {
            @Override
            public Configuration active() {
                return Configuration.DoubleFace.of();
            }

            @Override
            public void switchTo(Configuration configuration) {
                // never called: the adapter is not evaluated here
            }
        }, TuneSettings.of(TuneStrategy.ADAPTIVE, null).withDetector(detector), System::nanoTime);
        long t = 0;
        for (int i = 0; i < 1000; i++) {
            shared.arrival(t += 100_000);
            adapter.admitted(t);
        }
    }

    /** A per-thread synthetic clock: 10 µs between arrivals (100k req/s). */
    @State(Scope.Thread)
    public static class Clock {
        long t = 1_000_000_000L;
    }

    @Benchmark
    public void arrival(Clock c) {
        shared.arrival(c.t += 10_000);
    }

    @Benchmark
    @Threads(2)
    public void arrivalTwoThreads(Clock c) {
        shared.arrival(c.t += 10_000);
    }

    @Benchmark
    public void arrivalWithClock() {
        shared.arrival(System.nanoTime());
    }

    @Benchmark
    public void adapterAdmitted(Clock c) {
        adapter.admitted(c.t += 10_000);
    }

    @Benchmark
    @Threads(2)
    public void adapterAdmittedTwoThreads(Clock c) {
        adapter.admitted(c.t += 10_000);
    }

    @Benchmark
    public double rate(Clock c) {
        return shared.rate(c.t += 10_000);
    }

    /** Detection of one step, summed over an iteration. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class Step {
        public long steps;
        public long stepArrivals;
        public long stepMicros;
        final SplittableRandom rnd = new SplittableRandom(42);
    }

    @Benchmark
    public long detectStep(Step s) {
        LoadDetector d = LoadDetector.create(detector);
        long t = 0;
        for (int i = 0; i < 200; i++) { // 2 s at 100 req/s
            t += gap(s.rnd, 100);
            d.arrival(t);
        }
        long stepAt = t;
        int n = 0;
        while (d.rate(t) < 4000 && n < 1_000_000) {
            t += gap(s.rnd, 8000);
            d.arrival(t);
            n++;
        }
        s.steps++;
        s.stepArrivals += n;
        s.stepMicros += (t - stepAt) / 1000;
        return t;
    }

    private static long gap(SplittableRandom rnd, double rate) {
        return (long) (-Math.log(1 - rnd.nextDouble()) / rate * 1e9);
    }
}
