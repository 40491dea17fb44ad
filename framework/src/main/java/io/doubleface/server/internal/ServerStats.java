package io.doubleface.server.internal;

import io.doubleface.driver.spi.ResilientDriver;
import io.doubleface.internal.engine.FanoutEngine;
import io.doubleface.internal.engine.Outcome;
import io.doubleface.internal.engine.StageStats;
import io.doubleface.internal.loop.ThreadStats;
import io.doubleface.tune.LoadAdapter;
import java.util.Collections;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * One snapshot of a server's counters: the only view of them. {@code /admin/stats} (and
 * {@code FanoutServer.statsJson()}) is this snapshot serialised ({@link #toJson()}); doubleface's
 * tools and tests read the typed values. Taken by {@link ServerMetrics#snapshot()}; the counters
 * are read one after the other while the server runs (racy, single-writer counters: exact once the
 * load has stopped). Not API.
 *
 * <p>Immutable: lists and maps are unmodifiable copies in the order of the document.
 *
 * @param config the active configuration
 * @param version doubleface's version (the jar's {@code Implementation-Version}), or {@code null}
 *     when the classes run from a directory
 * @param uptimeMs milliseconds since the server started
 * @param deadlineMs the per-request deadline
 * @param backends the backends, in the server's order (at least one)
 * @param routes HTTP routes, then gRPC methods
 * @param requests every upstream request, by outcome
 * @param admission admission control
 * @param errors the per-request errors of the service's own code, by kind
 * @param stages per-stage service times of traced requests, or {@code null} while tracing is off
 * @param connections upstream connections closed or refused, bytes held for clients behind
 * @param loops every loop of the server (I/O loops, then the configurations' own loops)
 * @param threads every thread group of the process ({@code /proc}; empty where it cannot be read)
 * @param configurations the configurations built (active, parked, prepared)
 * @param switches configuration switches so far
 * @param switchLog the latest switches, oldest first ({@link FanoutEngine#SWITCH_LOG_LIMIT})
 * @param adapter the load adapter's state, or {@code null} when the server runs a static configuration
 */
public record ServerStats(
        String config,
        String version,
        long uptimeMs,
        long deadlineMs,
        List<Backend> backends,
        List<Route> routes,
        Requests requests,
        Admission admission,
        List<ErrorCount> errors,
        Stages stages,
        Connections connections,
        List<Loop> loops,
        List<ThreadStats.Group> threads,
        List<String> configurations,
        long switches,
        List<FanoutEngine.SwitchRecord> switchLog,
        Adapter adapter) {

    /** Copies the lists. */
    public ServerStats {
        Objects.requireNonNull(config, "config");
        backends = List.copyOf(backends);
        routes = List.copyOf(routes);
        Objects.requireNonNull(requests, "requests");
        Objects.requireNonNull(admission, "admission");
        errors = List.copyOf(errors);
        Objects.requireNonNull(connections, "connections");
        loops = List.copyOf(loops);
        threads = List.copyOf(threads);
        configurations = List.copyOf(configurations);
        switchLog = List.copyOf(switchLog);
    }

    /** {@return the backend named {@code name}, or {@code null}} */
    public Backend backend(String name) {
        for (Backend b : backends) {
            if (b.name().equals(name)) {
                return b;
            }
        }
        return null;
    }

    /** {@return the route named {@code name} (e.g. {@code GET /echo}, or a gRPC method's full name), or {@code null}} */
    public Route route(String name) {
        for (Route r : routes) {
            if (r.route().equals(name)) {
                return r;
            }
        }
        return null;
    }

    /** {@return the errors of kind {@code kind} ({@code decode}, {@code encode}, …), or {@code null}} */
    public ErrorCount error(String kind) {
        for (ErrorCount e : errors) {
            if (e.kind().equals(kind)) {
                return e;
            }
        }
        return null;
    }

    /** {@return the {@code /admin/stats} document: this snapshot as JSON (field names and order are a contract)} */
    public String toJson() {
        return StatsJson.write(this);
    }

    /** Outcome counts, every outcome present, in {@link Outcome} order. */
    static Map<Outcome, Long> everyOutcome(Map<Outcome, Long> counts) {
        EnumMap<Outcome, Long> m = new EnumMap<>(Outcome.class);
        for (Outcome o : Outcome.values()) {
            m.put(o, counts.getOrDefault(o, 0L));
        }
        return Collections.unmodifiableMap(m);
    }

    /** An unmodifiable copy of {@code m} that keeps its order. */
    static <K, V> Map<K, V> ordered(Map<K, V> m) {
        return Collections.unmodifiableMap(new LinkedHashMap<>(m));
    }

    /**
     * One backend.
     *
     * @param name its name
     * @param driver its shard list, e.g. {@code redis://127.0.0.1:7201-7220}
     * @param scheme the URI scheme {@code driver} starts with, or {@code null}
     * @param shards its number of shards
     * @param topology what its driver reports of its topology (empty for a fixed shard list)
     * @param resilience its resilience counters, or {@code null} when it has no resilience settings
     */
    public record Backend(String name, String driver, String scheme, int shards, Map<String, Object> topology,
            Resilience resilience) {
        /** Copies the topology (keeping its order). */
        public Backend {
            topology = ordered(topology);
        }
    }

    /**
     * A backend's resilience settings and counters ({@link ResilientDriver}).
     *
     * @param settings the resilience settings, as they describe themselves
     * @param counts its counters
     */
    public record Resilience(String settings, ResilientDriver.Stats counts) {}

    /**
     * One HTTP route or gRPC method.
     *
     * @param route e.g. {@code GET /users/{user}}, or the method's full name
     * @param answered its requests answered
     * @param outcomes its requests by outcome, every outcome present
     * @param meanMs the mean time from dispatch to answer of its answered requests (0 without any)
     */
    public record Route(String route, long answered, Map<Outcome, Long> outcomes, double meanMs) {
        /** Copies the counts. */
        public Route {
            outcomes = everyOutcome(outcomes);
        }

        /** {@return its requests answered with {@code outcome}} */
        public long count(Outcome outcome) {
            return outcomes.get(outcome);
        }
    }

    /**
     * Every upstream request: admitted by the engine, and answered by outcome (those refused by
     * the HTTP layer, e.g. {@code not_found}, were never admitted).
     *
     * @param admitted requests admitted by the engine
     * @param outcomes requests answered, by outcome, every outcome present
     */
    public record Requests(long admitted, Map<Outcome, Long> outcomes) {
        /** Copies the counts. */
        public Requests {
            outcomes = everyOutcome(outcomes);
        }

        /** {@return the requests answered with {@code outcome}} */
        public long count(Outcome outcome) {
            return outcomes.get(outcome);
        }

        /** {@return the requests answered, whatever the outcome} */
        public long answered() {
            long total = 0;
            for (long n : outcomes.values()) {
                total += n;
            }
            return total;
        }
    }

    /**
     * Admission control.
     *
     * @param mode {@code off}, {@code fixed} or {@code adaptive}
     * @param limit the current limit of requests in flight (0 when off)
     * @param inFlight requests in flight by its count (0 when off)
     * @param refused requests refused so far (0 when off)
     */
    public record Admission(String mode, int limit, int inFlight, long refused) {
        /** No admission control. */
        public static final Admission OFF = new Admission("off", 0, 0, 0);

        /** {@return whether admission control is on} */
        public boolean on() {
            return !mode.equals(OFF.mode);
        }
    }

    /**
     * The per-request errors of one kind.
     *
     * @param kind {@code decode}, {@code encode}, {@code execute}, {@code service}, …
     * @param count errors so far
     * @param unlogged of those, not logged (one log line per kind per 10 s)
     */
    public record ErrorCount(String kind, long count, long unlogged) {}

    /**
     * Per-stage service times of traced requests.
     *
     * @param oneIn one request in this many is traced
     * @param byConfiguration per configuration (by name), per stage
     */
    public record Stages(int oneIn, Map<String, Map<StageStats.Stage, StageStats.Summary>> byConfiguration) {
        /** Copies the maps (keeping their order). */
        public Stages {
            Map<String, Map<StageStats.Stage, StageStats.Summary>> m = new LinkedHashMap<>();
            byConfiguration.forEach((config, stages) -> m.put(config, ordered(stages)));
            byConfiguration = Collections.unmodifiableMap(m);
        }
    }

    /**
     * Upstream connections.
     *
     * @param slowReadersClosed closed because their client left responses unread
     * @param slowReadersClosedServerBound of those, closed at the server-wide bound of bytes held
     * @param behindBytes response bytes queued now on connections whose client is behind
     * @param refused closed on accept because the server had its most open
     */
    public record Connections(long slowReadersClosed, long slowReadersClosedServerBound, long behindBytes,
            long refused) {}

    /**
     * One event loop.
     *
     * @param name the loop, e.g. {@code io-0}
     * @param group its group, e.g. {@code io}
     * @param iterations I/O handler iterations ({@code epoll_wait} calls)
     * @param wakeups of those, iterations allowed to block
     * @param events I/O events handled
     * @param busyNanos time processing I/O, tasks and timers
     * @param idleNanos time waiting for I/O
     * @param tailBatches DoubleFace tail batches
     * @param tailReplies replies those batches processed
     * @param tailBatchMax the largest batch
     * @param tailBatchHistogramLog2 batches by size, bucket {@code i} holding sizes in
     *     {@code [2^i, 2^(i+1))}; trailing empty buckets left out (at least one bucket)
     */
    public record Loop(String name, String group, long iterations, long wakeups, long events, long busyNanos,
            long idleNanos, long tailBatches, long tailReplies, long tailBatchMax, List<Long> tailBatchHistogramLog2) {
        /** Copies the histogram. */
        public Loop {
            tailBatchHistogramLog2 = List.copyOf(tailBatchHistogramLog2);
        }

        /** {@return I/O events per iteration (0 without any)} */
        public double eventsPerIteration() {
            return iterations == 0 ? 0.0 : (double) events / iterations;
        }

        /** {@return I/O events per wake-up (0 without any)} */
        public double eventsPerWakeup() {
            return wakeups == 0 ? 0.0 : (double) events / wakeups;
        }

        /** {@return the busy time in milliseconds, to the microsecond} */
        public double busyMs() {
            return busyNanos / 1000 / 1000.0;
        }

        /** {@return the idle time in milliseconds, to the microsecond} */
        public double idleMs() {
            return idleNanos / 1000 / 1000.0;
        }

        /** {@return replies per tail batch (0 without any)} */
        public double tailBatchMean() {
            return tailBatches == 0 ? 0.0 : (double) tailReplies / tailBatches;
        }
    }

    /**
     * The load adapter ({@link LoadAdapter}; docs/tuning.md).
     *
     * @param strategy its strategy's label
     * @param decider the user's own decider, as it describes itself, or {@code null}
     *     with the built-in ones
     * @param detector the load detector, as it describes itself
     * @param profile the profile's service and date, or {@code none}
     * @param load the latest load estimate (requests per second)
     * @param fastLoad the latest fast (unsmoothed) load estimate
     * @param countWindowMs the detector's counting window
     * @param saturation the busy share above which the loops count as saturated
     * @param saturationWindowMs the window of that share
     * @param utilization the highest busy share of the I/O loops over that window, or NaN when unknown
     * @param predictedP99Us the predicted p99 of the active configuration at the load, or NaN
     * @param choices the configurations it chooses among
     * @param switches switches it made
     * @param switchesByReason those switches, by reason
     * @param live its live latency table
     * @param switchLog its latest switches, oldest first
     */
    public record Adapter(String strategy, String decider, String detector, String profile, double load,
            double fastLoad, long countWindowMs, double saturation, long saturationWindowMs, double utilization,
            double predictedP99Us, List<String> choices, long switches, Map<String, Long> switchesByReason,
            List<LoadAdapter.LiveCell> live, List<LoadAdapter.SwitchEvent> switchLog) {
        /** Copies the lists and the map (keeping its order). */
        public Adapter {
            choices = List.copyOf(choices);
            switchesByReason = ordered(switchesByReason);
            live = List.copyOf(live);
            switchLog = List.copyOf(switchLog);
        }
    }
}
