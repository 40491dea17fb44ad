package io.doubleface.loadgen;

import io.doubleface.driver.Transport;
import io.doubleface.internal.loop.LoopGroup;
import io.netty.channel.ConnectTimeoutException;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramLogWriter;

/**
 * An HTTP/1.1 and gRPC load generator: open loop (a Poisson process following a {@link Schedule}) for
 * latency, closed loop ({@code users} connections, each sending when its previous request was
 * answered) for capacity. Build one with {@link #builder(URI)}, call {@link #run()}, read the
 * {@link LoadResult}.
 *
 * <h2>Measurement</h2>
 * Open loop: every event loop runs its own Poisson process carrying {@code 1/loops} of the rate
 * (a superposition of independent Poisson processes is Poisson). Arrival times are <em>intended</em>
 * times computed from the previous intended time, never from when a request actually went out, and
 * latency is response end − intended time: a stalled server, a full connection pool or a late
 * generator all show as latency (no coordinated omission). The generator's own lateness —
 * dispatch time − intended time — goes into a separate send-lag histogram; a run whose requests
 * could not all be sent, or whose p99 send lag is over {@value #RATE_KEPT_MAX_LAG_MILLIS} ms, is
 * reported with {@code rate_kept: false}, never silently slowed down.
 *
 * <pre>
 *   loop k:  tick ─ for each arrival with intended ≤ now ─▶ idle connection? ─ yes ─▶ write
 *             │                                              └ no ─▶ waiting queue (+ connect if
 *             └ schedule(tick, next intended − now)                 below maxConnections)
 *   response end ─▶ latency = now − intended ─▶ connection takes the oldest waiting request, or idles
 * </pre>
 *
 * Each connection carries one request at a time (no pipelining). A {@code grpc://} target gets
 * the mix as {@code doubleface.ycsb.v1.FanoutService/Query} calls ({@link GrpcQueries}), one
 * HTTP/2 connection per connection, one call at a time on each, recorded exactly like HTTP
 * ({@link GrpcConnection}). Requests whose intended time is
 * in the warm-up run but are not recorded; a request counts for the interval in which its
 * response ended. Recording: HdrHistogram, µs, {@value RunStats#DIGITS} significant digits, one
 * interval per second or per {@link Builder#interval} (optionally written to an interval log). With a mix of two or more
 * templates, each measured response is also recorded in its template's own histogram (its
 * <em>class</em>: {@link LoadResult#classes()}), read once at the end of the run; a single-URL run
 * keeps none.
 *
 * <h2>Threading</h2>
 * The builder is not thread-safe. {@link #run()} may be called once, and blocks its caller, which
 * becomes the run's coordinator (interval roll-over, progress line, end of run). {@link #stop()}
 * may be called from any thread at any time (e.g. a SIGINT shutdown hook): the run stops
 * scheduling at once and {@link #run()} returns the partial result. The generator owns its event
 * loops: created by {@link #run()}, closed before it returns.
 */
public final class LoadGenerator {

    /** Default measured duration: {@value} s. */
    public static final int DEFAULT_DURATION_SECONDS = 30;
    /** Default warm-up (docs/measuring.md#warm-up): {@value} s. */
    public static final int DEFAULT_WARMUP_SECONDS = 10;
    /** Default per-request timeout, from the intended send time: {@value} s. */
    public static final int DEFAULT_TIMEOUT_SECONDS = 5;
    /** Default open-loop connection limit: {@value}. */
    public static final int DEFAULT_MAX_CONNECTIONS = 1024;
    /** Default key range of {@code {key}}: {@value}. */
    public static final int DEFAULT_KEYS = 1000;
    /** Longest a connect may take: {@value} ms (so an unreachable target is reported within seconds). */
    public static final long CONNECT_TIMEOUT_MILLIS = 3000;
    /** The p99 send lag above which the generator warns: {@value} ms. */
    public static final double SEND_LAG_WARN_MILLIS = 1.0;
    /** The p99 send lag above which the rate counts as not kept: {@value} ms. */
    public static final double RATE_KEPT_MAX_LAG_MILLIS = 10.0;
    /** A measured send this late or later goes to the lag log: {@value} µs. */
    public static final long LATE_MICROS = 1000;
    /** Most rows of the lag log: {@value}. */
    public static final int MAX_LATE_LOGGED = 100_000;

    /** The share of scheduled requests that must have been sent for the rate to count as kept: {@value}. */
    public static final double RATE_KEPT_MIN_SENT = 0.99;
    /** Runs (warm-up + duration) longer than this many seconds get a progress line: {@value}. */
    public static final int PROGRESS_MIN_SECONDS = 5;

    final URI target;
    final RequestMix mix;
    final Schedule schedule;
    final Arrivals arrivals;
    final int users;
    final Duration think;
    final Duration warmup;
    final Duration duration;
    final long maxRequests;
    final int maxConnections;
    final Duration timeout;
    final int keys;
    final int loops;
    final Transport transport;
    final long seed;
    final Path hlog;
    final Duration interval;
    final Path lagLog;
    final boolean busyPoll;
    final Runnable onMeasureStart;
    final PrintWriter messages;
    final boolean progress;
    /** The mix as gRPC calls for a {@code grpc://} target, else {@code null}. */
    final GrpcQueries grpc;

    private final AtomicBoolean started = new AtomicBoolean();
    private volatile Run current;
    private volatile boolean stopRequested;

    private LoadGenerator(Builder b) {
        this.target = b.target;
        this.mix = b.mix;
        this.schedule = b.schedule;
        this.arrivals = b.arrivals;
        this.users = b.users;
        this.think = b.think;
        this.warmup = b.warmup;
        this.duration = b.duration != null ? b.duration
                : b.schedule != null && b.schedule.length() != null ? b.schedule.length()
                : Duration.ofSeconds(DEFAULT_DURATION_SECONDS);
        this.maxRequests = b.maxRequests;
        this.maxConnections = b.maxConnections;
        this.timeout = b.timeout;
        this.keys = b.keys;
        this.loops = b.loops;
        this.transport = b.transport;
        this.seed = b.seed;
        this.hlog = b.hlog;
        this.interval = b.interval;
        this.lagLog = b.lagLog;
        this.busyPoll = b.busyPoll;
        this.onMeasureStart = b.onMeasureStart;
        this.messages = b.messages;
        this.progress = b.progress;
        this.grpc = "grpc".equals(b.target.getScheme()) ? GrpcQueries.of(b.mix) : null;
    }

    /**
     * A builder for a run against {@code target}: {@code http://host:port} (a path in it is
     * ignored) or {@code grpc://host:port} (the YCSB service's gRPC upstream).
     */
    public static Builder builder(URI target) {
        return new Builder(target);
    }

    /** The schedule, and the arrival process when it is not Poisson: {@code 2000/s, h2:4 arrivals}. */
    String scheduleText() {
        return schedule + (arrivals.equals(Arrivals.POISSON) ? "" : ", " + arrivals + " arrivals");
    }

    /** Whether this is a closed-loop generator ({@link Builder#users}). */
    public boolean isClosedLoop() {
        return users > 0;
    }

    /** The measured duration (after the warm-up). */
    public Duration duration() {
        return duration;
    }

    /**
     * Asks the run to stop: scheduling ends now and {@link #run()} returns what was measured so
     * far. Any thread, any number of times, also before {@link #run()} (which then returns at once).
     */
    public void stop() {
        stopRequested = true;
        Run r = current;
        if (r != null) {
            r.stopping = true;
            r.wake();
        }
    }

    /**
     * Runs the warm-up and the measured part, and returns the result (partial after {@link #stop()}).
     *
     * @throws LoadException if the target cannot be resolved or no connection to it could be opened
     * @throws IllegalStateException if called twice
     */
    public LoadResult run() throws LoadException, InterruptedException {
        if (!started.compareAndSet(false, true)) {
            throw new IllegalStateException("run() was already called");
        }
        String host = target.getHost();
        int port = target.getPort() > 0 ? target.getPort() : 80;
        InetSocketAddress address;
        try {
            address = new InetSocketAddress(InetAddress.getByName(host), port);
        } catch (UnknownHostException e) {
            throw new LoadException("cannot resolve " + host + ": unknown host", e);
        }
        Run run = new Run(this, address, host + ":" + port);
        try (LoopGroup group = new LoopGroup("loadgen", loops, transport)) {
            if (busyPoll) {
                group.setBusyPoll(true);
            }
            current = run;
            if (stopRequested) {
                run.stopping = true;
            }
            return run.execute(group);
        } finally {
            run.finished = true;
            current = null;
        }
    }

    /** One run's shared state. Fields written by the coordinator before the loops start are final. */
    static final class Run {
        final LoadGenerator generator;
        final InetSocketAddress address;
        final String hostHeader;
        final RunStats stats;
        final long warmupNanos;
        long measureStart;
        long measureEnd;
        volatile boolean stopping;
        volatile boolean finished;
        volatile boolean budgetUsed;
        volatile Throwable failure;
        /** Measured sends at least {@link #LATE_MICROS} late, {offset from measureStart ns, lag µs}; with a lag log. */
        final ConcurrentLinkedQueue<long[]> late;
        final AtomicInteger lateCount = new AtomicInteger();
        private final Thread coordinator = Thread.currentThread();

        Run(LoadGenerator g, InetSocketAddress address, String hostHeader) {
            this.generator = g;
            this.address = address;
            this.hostHeader = hostHeader;
            this.stats = new RunStats(g.maxRequests, g.mix.templates().size());
            this.warmupNanos = g.warmup.toNanos();
            this.late = g.lagLog != null ? new ConcurrentLinkedQueue<>() : null;
        }

        /** Notes a measured send {@code lagMicros} late (loop thread; only with a lag log, only late ones). */
        void late(long intended, long lagMicros) {
            if (lateCount.incrementAndGet() <= MAX_LATE_LOGGED) {
                late.add(new long[] {intended - measureStart, lagMicros});
            }
        }

        boolean closedLoop() {
            return generator.users > 0;
        }

        void wake() {
            LockSupport.unpark(coordinator);
        }

        void budgetUsed() {
            budgetUsed = true;
            stopping = true;
            wake();
        }

        void abort(Throwable cause) {
            if (failure == null) {
                failure = cause;
            }
            stopping = true;
            wake();
        }

        LoadResult execute(LoopGroup group) throws LoadException, InterruptedException {
            LoadGenerator g = generator;
            long start = System.nanoTime();
            measureStart = start + warmupNanos;
            measureEnd = measureStart + g.duration.toNanos();
            boolean showProgress = g.progress && g.messages != null
                    && (g.warmup.plus(g.duration)).toSeconds() > PROGRESS_MIN_SECONDS;
            HistogramLogWriter log = openLog(g.hlog, start);
            int n = group.size();
            Worker[] workers = new Worker[n];
            for (int i = 0; i < n; i++) {
                int users = g.users / n + (i < g.users % n ? 1 : 0);
                int maxConns = Math.max(1, g.maxConnections / n + (i < g.maxConnections % n ? 1 : 0));
                workers[i] = new Worker(this, group.loops().get(i), group.socketChannelClass(), g.seed * 31 + i,
                        1.0 / n, maxConns, users);
            }
            // measureStart/measureEnd are published to the loops by the task submission in start()
            for (Worker w : workers) {
                w.start();
            }
            Intervals intervals = new Intervals(this, log, start, showProgress);
            long tickNanos = g.interval.toNanos();
            long nextTick = start + tickNanos;
            boolean measuring = g.onMeasureStart == null;
            while (!stopping && System.nanoTime() < measureEnd) {
                long now = System.nanoTime();
                if (!measuring && now >= measureStart) {
                    measuring = true;
                    g.onMeasureStart.run();
                    continue;
                }
                if (now >= nextTick) {
                    intervals.roll(now);
                    nextTick += tickNanos;
                    continue;
                }
                LockSupport.parkNanos(this, Math.min(measuring ? measureEnd : measureStart, Math.min(nextTick,
                        measureEnd)) - now);
                if (Thread.interrupted()) {
                    throw new InterruptedException();
                }
            }
            long end = Math.min(System.nanoTime(), measureEnd);
            stopping = stopping || budgetUsed; // closed-loop users see the end time themselves
            if (failure != null) {
                throw new LoadException("cannot connect to " + hostHeader + ": " + describe(failure), failure);
            }
            // Drain: answers to requests already sent still count, up to the timeout (not after stop()).
            long drainUntil = System.nanoTime() + g.timeout.toNanos() + TimeUnit.MILLISECONDS.toNanos(2 * Worker.SWEEP_MILLIS);
            while (!g.stopRequested && stats.outstanding.get() > 0 && System.nanoTime() < drainUntil) {
                long now = System.nanoTime();
                if (now >= nextTick) {
                    intervals.roll(now);
                    nextTick += tickNanos;
                }
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
            }
            stopping = true;
            // Classes are read once, before the total's last interval: a worker records the total
            // first, so a response racing this end is in both or in the total only (the classes
            // never count a request the total lacks; after a full drain they add up to it exactly).
            Histogram[] classes = stats.classTotals();
            Histogram failed = stats.failedLatency.getIntervalHistogram();
            intervals.roll(System.nanoTime());
            Histogram ok = intervals.ok;
            finished = true;
            if (log != null) {
                log.close();
            }
            if (late != null) {
                writeLagLog(g.lagLog);
            }
            return result(Math.max(0, end - measureStart), intervals, classes, ok, failed);
        }

        /** One line per late send, in send order: when (ms since the measured part began) and how late (µs). */
        private void writeLagLog(Path file) throws LoadException {
            List<long[]> rows = new ArrayList<>(late);
            rows.sort(Comparator.comparingLong(r -> r[0]));
            StringBuilder b = new StringBuilder("# doubleface load: measured sends at least " + LATE_MICROS
                    + " us late; " + lateCount.get() + " in all" + (lateCount.get() > MAX_LATE_LOGGED
                    ? ", the first " + MAX_LATE_LOGGED + " listed" : "") + "\nt_ms,lag_us\n");
            for (long[] r : rows) {
                b.append(String.format(Locale.ROOT, "%.3f", r[0] / 1e6)).append(',').append(r[1]).append('\n');
            }
            try {
                Files.writeString(file, b);
            } catch (IOException e) {
                throw new LoadException("cannot write the lag log " + file + ": " + e.getMessage(), e);
            }
        }

        private LoadResult result(long measuredNanos, Intervals iv, Histogram[] classTotals, Histogram ok,
                Histogram failed) {
            LoadGenerator g = generator;
            Map<ErrorKind, Long> errors = new EnumMap<>(ErrorKind.class);
            for (ErrorKind k : ErrorKind.values()) {
                errors.put(k, stats.errors[k.ordinal()].sum());
            }
            double seconds = measuredNanos / 1e9;
            long scheduled = stats.scheduled.sum();
            long sent = stats.sent.sum();
            Double offered = null;
            Boolean kept = null;
            if (!closedLoop()) {
                offered = g.schedule.meanRate(measuredNanos);
                double lagP99 = iv.sendLag.getTotalCount() == 0 ? 0 : iv.sendLag.getValueAtPercentile(99) / 1000.0;
                kept = sent >= RATE_KEPT_MIN_SENT * scheduled && lagP99 <= RATE_KEPT_MAX_LAG_MILLIS;
            }
            List<LoadResult.ClassResult> classes = new ArrayList<>();
            if (classTotals != null) {
                List<RequestMix.Template> ts = g.mix.templates();
                for (int i = 0; i < classTotals.length; i++) {
                    classes.add(new LoadResult.ClassResult(ts.get(i).path(), ts.get(i).weight(), classTotals[i]));
                }
            }
            return new LoadResult(closedLoop() ? "closed" : "open", g.target.toString(), g.mix.toString(),
                    closedLoop() ? null : g.scheduleText(), g.users, offered, kept,
                    iv.latency.getTotalCount(), scheduled, sent, Math.max(0, stats.outstanding.get()), errors,
                    seconds, g.warmup.toNanos() / 1e9, iv.latency, iv.sendLag, stats.connectionWaits.sum(),
                    stats.resent.sum(), stats.maxConnections.get(), g.stopRequested, budgetUsed, classes,
                    new LoadResult.ClassResult("status<400", 0, ok), new LoadResult.ClassResult("status>=400", 0, failed));
        }

        private static HistogramLogWriter openLog(Path file, long startNanos) throws LoadException {
            if (file == null) {
                return null;
            }
            try {
                HistogramLogWriter w = new HistogramLogWriter(file.toFile());
                long startMillis = System.currentTimeMillis() - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
                w.outputComment("doubleface load: latency from the intended send time in us; tag send_lag: "
                        + "dispatch - intended in us");
                w.outputLogFormatVersion();
                w.outputStartTime(startMillis);
                w.setBaseTime(startMillis);
                w.outputLegend();
                return w;
            } catch (FileNotFoundException e) {
                throw new LoadException("cannot write interval log " + file + ": " + e.getMessage(), e);
            }
        }
    }

    /**
     * The coordinator's per-interval work: interval histograms, totals, log; and, per second
     * whatever the interval, progress and warnings.
     */
    private static final class Intervals {
        final Run run;
        final HistogramLogWriter log;
        final long start;
        final boolean progress;
        final Histogram latency = new Histogram(RunStats.DIGITS);
        final Histogram sendLag = new Histogram(RunStats.DIGITS);
        /** Successful responses (status below 400) of the whole run. */
        final Histogram ok = new Histogram(RunStats.DIGITS);
        /** Latency and send lag since the last progress second (progress line, warnings). */
        final Histogram secondLatency = new Histogram(RunStats.DIGITS);
        final Histogram secondLag = new Histogram(RunStats.DIGITS);
        Histogram latencyInterval;
        Histogram sendLagInterval;
        Histogram okInterval;
        /** Progress and warnings run at the first roll at least this long after the last (ns). */
        final long secondGate;
        long last;
        long lastSecond;
        long lastSent;
        long lastWaits;
        boolean warnedLag;
        boolean warnedWaits;

        Intervals(Run run, HistogramLogWriter log, long start, boolean progress) {
            this.run = run;
            this.log = log;
            this.start = start;
            this.progress = progress;
            this.last = start;
            this.lastSecond = start;
            // a second has passed when the next interval would end past it (ticks are late at times)
            long second = TimeUnit.SECONDS.toNanos(1);
            this.secondGate = second - Math.min(run.generator.interval.toNanos(), second) / 2;
        }

        void roll(long now) {
            // ok before the total: a worker records the total first, so ok never counts a response
            // the total lacks
            okInterval = run.stats.okLatency.getIntervalHistogram(okInterval);
            latencyInterval = run.stats.latency.getIntervalHistogram(latencyInterval);
            sendLagInterval = run.stats.sendLag.getIntervalHistogram(sendLagInterval);
            latency.add(latencyInterval);
            sendLag.add(sendLagInterval);
            ok.add(okInterval);
            secondLatency.add(latencyInterval);
            secondLag.add(sendLagInterval);
            if (log != null) {
                double from = (last - start) / 1e9;
                double to = (now - start) / 1e9;
                latencyInterval.setStartTimeStamp(0);
                log.outputIntervalHistogram(from, to, latencyInterval, 1000.0);
                okInterval.setTag("ok");
                log.outputIntervalHistogram(from, to, okInterval, 1000.0);
                sendLagInterval.setTag("send_lag");
                log.outputIntervalHistogram(from, to, sendLagInterval, 1000.0);
            }
            last = now;
            if (now - lastSecond < secondGate) {
                return;
            }
            PrintWriter msg = run.generator.messages;
            long sent = run.stats.allSent.sum();
            long waits = run.stats.connectionWaits.sum();
            double secs = (now - lastSecond) / 1e9;
            if (msg != null && !run.closedLoop()) {
                if (!warnedLag && secondLag.getTotalCount() >= 100
                        && secondLag.getValueAtPercentile(99) / 1000.0 > SEND_LAG_WARN_MILLIS) {
                    warnedLag = true;
                    msg.printf(Locale.ROOT, "load: warning: p99 send lag %.2f ms (over %.0f ms): the generator is late "
                            + "on its schedule (CPU-bound? pin it to its own core, or add --loops)%n",
                            secondLag.getValueAtPercentile(99) / 1000.0, SEND_LAG_WARN_MILLIS);
                }
                if (!warnedWaits && waits > lastWaits) {
                    warnedWaits = true;
                    msg.printf(Locale.ROOT, "load: warning: requests are waiting for a free connection (all %d in "
                            + "use); the wait counts as latency. Raise --max-connections if the server should see them%n",
                            run.generator.maxConnections);
                }
            }
            if (progress && secs > 0.5) {
                boolean warm = now < run.measureStart;
                msg.printf(Locale.ROOT, "load %5.0fs %-8s %8.0f req/s  p99 %s  errors %d%n", (now - start) / 1e9,
                        warm ? "warm-up" : "measure", (sent - lastSent) / secs,
                        secondLatency.getTotalCount() >= 100
                                ? String.format(Locale.ROOT, "%.2f ms", secondLatency.getValueAtPercentile(99) / 1000.0)
                                : "n/a", errorsSoFar());
                msg.flush();
            }
            lastSent = sent;
            lastWaits = waits;
            lastSecond = now;
            secondLatency.reset();
            secondLag.reset();
        }

        private long errorsSoFar() {
            long e = 0;
            for (var a : run.stats.errors) {
                e += a.sum();
            }
            return e;
        }
    }

    /** A short reason: {@code connection refused}, {@code connect timed out}, … */
    static String describe(Throwable t) {
        if (t instanceof ConnectTimeoutException) {
            return "connect timed out";
        }
        String m = t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
        String lower = m.toLowerCase(Locale.ROOT);
        for (String known : new String[] {"connection refused", "no route to host", "network is unreachable",
                "connection reset", "connection timed out"}) {
            if (lower.contains(known)) {
                return known;
            }
        }
        return t instanceof ConnectException ? lower : m;
    }

    /** Options of a run. Not thread-safe. Every setter checks its value and fails fast with a message. */
    public static final class Builder {
        private final URI target;
        private RequestMix mix;
        private Schedule schedule;
        private Arrivals arrivals = Arrivals.POISSON;
        private int users;
        private Duration think = Duration.ZERO;
        private Duration warmup = Duration.ofSeconds(DEFAULT_WARMUP_SECONDS);
        private Duration duration;
        private long maxRequests = Long.MAX_VALUE;
        private int maxConnections = DEFAULT_MAX_CONNECTIONS;
        private Duration timeout = Duration.ofSeconds(DEFAULT_TIMEOUT_SECONDS);
        private int keys = DEFAULT_KEYS;
        private int loops = 1;
        private Transport transport = Transport.AUTO;
        private long seed = System.nanoTime();
        private Path hlog;
        private Duration interval = Duration.ofSeconds(1);
        private Path lagLog;
        private boolean busyPoll;
        private Runnable onMeasureStart;
        private PrintWriter messages;
        private boolean progress = true;

        private Builder(URI target) {
            boolean grpc = target != null && "grpc".equalsIgnoreCase(target.getScheme());
            if (target == null || !grpc && !"http".equalsIgnoreCase(target.getScheme()) || target.getHost() == null
                    || grpc && target.getPort() < 1) {
                throw new IllegalArgumentException("target: '" + target + "' (expected: http://HOST:PORT or grpc://HOST:PORT)");
            }
            this.target = URI.create((grpc ? "grpc://" : "http://") + target.getHost()
                    + (target.getPort() > 0 ? ":" + target.getPort() : ""));
        }

        /** The request paths (required). */
        public Builder mix(RequestMix m) {
            this.mix = m;
            return this;
        }

        /** Open loop at a constant {@code rate} requests/s. */
        public Builder rate(double rate) {
            return schedule(Schedule.constant(rate));
        }

        /**
         * The inter-arrival distribution of an open loop (default {@link Arrivals#POISSON}). With
         * {@link #loops} N, each loop draws its own process at 1/N of the rate, and the merged stream is
         * less bursty than one {@code h2} stream (the superposition of N processes tends to Poisson).
         */
        public Builder arrivals(Arrivals a) {
            this.arrivals = java.util.Objects.requireNonNull(a, "arrivals");
            return this;
        }

        /** Open loop following {@code s}; the duration defaults to the schedule's length. */
        public Builder schedule(Schedule s) {
            this.schedule = s;
            return this;
        }

        /** Closed loop with {@code n} users (connections), each one request at a time. */
        public Builder users(int n) {
            require(n > 0 && n <= 100_000, "users: " + n + " (expected: 1..100000)");
            this.users = n;
            return this;
        }

        /** Closed loop: pause between a response and the user's next request (default 0). */
        public Builder think(Duration d) {
            require(d != null && !d.isNegative(), "think: " + d + " (expected: >= 0)");
            this.think = d;
            return this;
        }

        /** Requests run but are not recorded for this long first (default {@value #DEFAULT_WARMUP_SECONDS} s). */
        public Builder warmup(Duration d) {
            require(d != null && !d.isNegative(), "warmup: " + d + " (expected: >= 0)");
            this.warmup = d;
            return this;
        }

        /** The measured part (default: the schedule's length, else {@value #DEFAULT_DURATION_SECONDS} s). */
        public Builder duration(Duration d) {
            require(d != null && d.toMillis() > 0, "duration: " + d + " (expected: > 0)");
            this.duration = d;
            return this;
        }

        /** Stop after this many measured requests. */
        public Builder maxRequests(long n) {
            require(n > 0, "max-requests: " + n + " (expected: > 0)");
            this.maxRequests = n;
            return this;
        }

        /** Open loop: most connections opened (default {@value #DEFAULT_MAX_CONNECTIONS}). */
        public Builder maxConnections(int n) {
            require(n > 0 && n <= 100_000, "max-connections: " + n + " (expected: 1..100000)");
            this.maxConnections = n;
            return this;
        }

        /** Per request, from its intended send time (default {@value #DEFAULT_TIMEOUT_SECONDS} s). */
        public Builder timeout(Duration d) {
            require(d != null && d.toMillis() > 0, "timeout: " + d + " (expected: > 0)");
            this.timeout = d;
            return this;
        }

        /** {@code {key}} is drawn from {@code [0, n)} (default {@value #DEFAULT_KEYS}). */
        public Builder keys(int n) {
            require(n > 0, "keys: " + n + " (expected: > 0)");
            this.keys = n;
            return this;
        }

        /** Event loops of the generator (default 1: one core). */
        public Builder loops(int n) {
            require(n > 0 && n <= 64, "loops: " + n + " (expected: 1..64)");
            this.loops = n;
            return this;
        }

        public Builder transport(Transport t) {
            this.transport = t;
            return this;
        }

        /** Seed of the arrivals, mix and keys (default: the clock). */
        public Builder seed(long s) {
            this.seed = s;
            return this;
        }

        /**
         * Writes the interval histograms to {@code file} (HdrHistogram log format): per
         * {@link #interval}, the latency of every response (untagged), of the successful ones
         * (tag {@code ok}: status below 400) and the send lag (tag {@code send_lag}).
         */
        public Builder hlog(Path file) {
            this.hlog = file;
            return this;
        }

        /**
         * The length of one interval of the {@link #hlog} (default 1 s; 1 ms to 60 s). Progress
         * lines and the generator's warnings stay per second whatever the interval.
         *
         * @throws IllegalArgumentException outside 1 ms to 60 s
         */
        public Builder interval(Duration d) {
            if (d == null || d.compareTo(Duration.ofMillis(1)) < 0 || d.compareTo(Duration.ofSeconds(60)) > 0) {
                throw new IllegalArgumentException("interval: expected 1ms to 60s, got " + d);
            }
            this.interval = d;
            return this;
        }

        /**
         * Writes every measured send that left at least {@value #LATE_MICROS} µs after its intended
         * time to {@code file} (CSV {@code t_ms,lag_us}, at most {@value #MAX_LATE_LOGGED} rows): to
         * see whether the send lag is periodic (a once-a-second stall shows as t_ms clustering at
         * whole seconds), bursty, or spread. Default: none.
         */
        public Builder lagLog(Path file) {
            this.lagLog = file;
            return this;
        }

        /**
         * Busy-polls the generator's event loops instead of blocking in {@code epoll_wait} between
         * sends (epoll only): each loop spins its core, and an arrival is sent without a wake-up.
         * Default: off.
         */
        public Builder busyPoll(boolean on) {
            this.busyPoll = on;
            return this;
        }

        /**
         * Runs {@code r} once, on the generator's control thread, when the warm-up ends and the
         * measured part begins (within a millisecond): for a program that samples the server's own
         * counters over exactly the measured part. It must return quickly. Default: none.
         */
        public Builder onMeasureStart(Runnable r) {
            this.onMeasureStart = r;
            return this;
        }

        /** Where warnings and the progress line go (default: nowhere). */
        public Builder messages(PrintWriter w) {
            this.messages = w;
            return this;
        }

        /** Convenience for {@link #messages(PrintWriter)}. */
        public Builder messages(PrintStream s) {
            return messages(new PrintWriter(s, true));
        }

        /** Whether to print a progress line every second on runs over {@value #PROGRESS_MIN_SECONDS} s. */
        public Builder progress(boolean on) {
            this.progress = on;
            return this;
        }

        /**
         * @throws IllegalArgumentException if options are missing or contradict each other, or a
         *     {@code grpc://} target's mix is not {@code /query?fanout=&size=&key=} requests
         */
        public LoadGenerator build() {
            require(mix != null, "no requests (expected: a URL or a mix)");
            require((schedule != null) != (users > 0), schedule == null
                    ? "no load (expected: a rate or schedule for open loop, or users for closed loop)"
                    : "both a rate/schedule and users (expected: one: open loop or closed loop)");
            require(schedule != null || arrivals.equals(Arrivals.POISSON),
                    "arrivals " + arrivals + " with a closed loop (expected: arrivals only with a rate or schedule)");
            return new LoadGenerator(this);
        }

        private static void require(boolean ok, String message) {
            if (!ok) {
                throw new IllegalArgumentException(message);
            }
        }
    }
}
