package io.doubleface.loadgen;

import io.doubleface.internal.Json;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.HdrHistogram.Histogram;

/**
 * The result of one {@link LoadGenerator} run: counts, errors by kind, and the latency and send-lag
 * histograms (µs) of the measured part. Latency is from the intended send time to the end of the
 * response, for every response (4xx/5xx included; timeouts and connection failures are errors
 * only). A percentile is reported only when there are at least {@code 100/(1-p)} samples
 * (docs/measuring.md#samples-per-percentile): {@link #percentileMillis} returns {@code null} otherwise. A mix of two or
 * more templates also has the latency of each template, its {@linkplain #classes() class}.
 *
 * <p>Immutable after construction (the histograms are copies; do not modify them); thread-safe.
 */
public final class LoadResult {

    private final String mode;
    private final String target;
    private final String mix;
    private final String schedule;
    private final int users;
    private final Double offeredRate;
    private final Boolean rateKept;
    private final long requests;
    private final long scheduled;
    private final long sent;
    private final long unfinished;
    private final Map<ErrorKind, Long> errorsByKind;
    private final double durationSeconds;
    private final double warmupSeconds;
    private final Histogram latency;
    private final Histogram sendLag;
    private final long connectionWaits;
    private final long resent;
    private final int maxConnections;
    private final boolean stopped;
    private final boolean maxRequestsReached;
    private final List<ClassResult> classes;
    private final ClassResult ok;
    private final ClassResult failed;

    LoadResult(String mode, String target, String mix, String schedule, int users, Double offeredRate,
            Boolean rateKept, long requests, long scheduled, long sent, long unfinished,
            Map<ErrorKind, Long> errorsByKind, double durationSeconds, double warmupSeconds, Histogram latency,
            Histogram sendLag, long connectionWaits, long resent, int maxConnections, boolean stopped, boolean maxRequestsReached,
            List<ClassResult> classes, ClassResult ok, ClassResult failed) {
        this.mode = mode;
        this.target = target;
        this.mix = mix;
        this.schedule = schedule;
        this.users = users;
        this.offeredRate = offeredRate;
        this.rateKept = rateKept;
        this.requests = requests;
        this.scheduled = scheduled;
        this.sent = sent;
        this.unfinished = unfinished;
        this.errorsByKind = Collections.unmodifiableMap(new EnumMap<>(errorsByKind));
        this.durationSeconds = durationSeconds;
        this.warmupSeconds = warmupSeconds;
        this.latency = latency.copy();
        this.sendLag = sendLag.copy();
        this.connectionWaits = connectionWaits;
        this.resent = resent;
        this.maxConnections = maxConnections;
        this.stopped = stopped;
        this.maxRequestsReached = maxRequestsReached;
        this.classes = List.copyOf(classes);
        this.ok = ok;
        this.failed = failed;
    }

    /**
     * The measured latency of one template of the mix (a request class), e.g. the large-fanout
     * requests of a 50/50 mix of fanout 5 and fanout 50. Same recording and percentile rule as the
     * totals of the {@link LoadResult}, for the responses to this template's requests only.
     *
     * <p>Immutable after construction (the histogram is a copy; do not modify it); thread-safe.
     */
    public static final class ClassResult {

        private final String url;
        private final int weight;
        private final Histogram latency;

        ClassResult(String url, int weight, Histogram latency) {
            this.url = url;
            this.weight = weight;
            this.latency = latency.copy();
        }

        /** The template as given in the mix, {@value RequestMix#KEY} included. */
        public String url() {
            return url;
        }

        /** The template's weight in the mix. */
        public int weight() {
            return weight;
        }

        /** Measured responses to this template's requests. */
        public long requests() {
            return latency.getTotalCount();
        }

        /** Latency percentile {@code p} (0..100) in ms, or {@code null} with fewer than {@code 100/(1-p)} samples. */
        public Double percentileMillis(double p) {
            return LoadResult.percentileMillis(latency, p);
        }

        /** The largest latency, ms, or {@code null} without responses. */
        public Double maxMillis() {
            return latency.getTotalCount() == 0 ? null : latency.getMaxValue() / 1000.0;
        }

        /** Latency histogram, µs. A copy: do not modify. */
        public Histogram latency() {
            return latency;
        }
    }

    /** Fewest samples for percentile {@code p} (0..100) to be reported: {@code 100/(1-p)}. */
    public static long minSamples(double p) {
        return (long) Math.ceil(100.0 / (1.0 - p / 100.0) - 1e-6);
    }

    /** Percentile {@code p} (0..100) of {@code h} in ms, or {@code null} with too few samples. */
    public static Double percentileMillis(Histogram h, double p) {
        return h.getTotalCount() < minSamples(p) ? null : h.getValueAtPercentile(p) / 1000.0;
    }

    /** Latency percentile {@code p} (0..100) in ms, or {@code null} with fewer than {@code 100/(1-p)} samples. */
    public Double percentileMillis(double p) {
        return percentileMillis(latency, p);
    }

    /** The largest latency, ms, or {@code null} without responses. */
    public Double maxMillis() {
        return latency.getTotalCount() == 0 ? null : latency.getMaxValue() / 1000.0;
    }

    /** {@code open} or {@code closed}. */
    public String mode() {
        return mode;
    }

    /** Measured responses (the latency histogram's count). */
    public long requests() {
        return requests;
    }

    /** Measured requests due (open loop: intended times in the measured window; closed: sent). */
    public long scheduled() {
        return scheduled;
    }

    /** Measured requests written to a connection before the end of the measured window. */
    public long sent() {
        return sent;
    }

    /** Requests neither answered nor failed when the run ended (after {@code stop()}, or past the drain). */
    public long unfinished() {
        return unfinished;
    }

    public long errors() {
        return errorsByKind.values().stream().mapToLong(Long::longValue).sum();
    }

    public Map<ErrorKind, Long> errorsByKind() {
        return errorsByKind;
    }

    /** Measured responses per second of measured time. */
    public double throughput() {
        return durationSeconds <= 0 ? 0 : requests / durationSeconds;
    }

    /** Open loop: the schedule's mean rate over the measured time; closed loop: {@code null}. */
    public Double offeredRate() {
        return offeredRate;
    }

    /** Measured requests sent per second of measured time. */
    public double achievedRate() {
        return durationSeconds <= 0 ? 0 : sent / durationSeconds;
    }

    /**
     * Open loop: whether the generator kept its schedule (at least
     * {@value LoadGenerator#RATE_KEPT_MIN_SENT} of the due requests sent, p99 send lag at most
     * {@value LoadGenerator#RATE_KEPT_MAX_LAG_MILLIS} ms); closed loop: {@code null}.
     */
    public Boolean rateKept() {
        return rateKept;
    }

    public double durationSeconds() {
        return durationSeconds;
    }

    public double warmupSeconds() {
        return warmupSeconds;
    }

    /** Latency histogram, µs. A copy: do not modify. */
    public Histogram latency() {
        return latency;
    }

    /** Send lag histogram (dispatch − intended), µs. A copy: do not modify. */
    public Histogram sendLag() {
        return sendLag;
    }

    /** Measured requests that waited for a free connection. */
    public long connectionWaits() {
        return connectionWaits;
    }

    /**
     * Measured requests sent a second time because the kept-alive connection they went out on
     * closed before any byte of the response (the server closed it as idle just then; open loop,
     * idempotent methods only). Their latency is from the first intended send time; a second
     * loss counts as a {@code closed} error.
     */
    public long resent() {
        return resent;
    }

    /** Most connections open at once. */
    public int maxConnections() {
        return maxConnections;
    }

    /** Whether the run ended early by {@code stop()} (e.g. Ctrl-C). */
    public boolean stopped() {
        return stopped;
    }

    public boolean maxRequestsReached() {
        return maxRequestsReached;
    }

    /**
     * The latency per template of the mix, in mix order, when the mix has two or more templates;
     * empty for a single template (the totals are its class). The classes' requests add up to
     * {@link #requests()} (a response racing the end of a stopped run may be in the total only).
     */
    public List<ClassResult> classes() {
        return classes;
    }

    /**
     * The measured responses with a status below 400, and their latency: what a client that was
     * served saw (a server shedding load answers the others fast, which would flatter the total).
     *
     * @return the successful part, {@code url()} {@code status<400}
     */
    public ClassResult ok() {
        return ok;
    }

    /**
     * The measured responses with a status of 400 or more (e.g. 503 refusals), and their latency.
     *
     * @return the failed part, {@code url()} {@code status>=400}
     */
    public ClassResult failed() {
        return failed;
    }

    /** The summary as one JSON object on one line. */
    public String toJson() {
        Json j = new Json().begin();
        j.field("mode", mode).field("target", target).field("mix", mix).field("schedule", schedule);
        if (users > 0) {
            j.field("users", users);
        } else {
            j.key("users").value((String) null);
        }
        j.field("requests", requests).field("scheduled", scheduled).field("sent", sent)
                .field("unfinished", unfinished).field("errors", errors());
        j.key("errors_by_kind").begin();
        errorsByKind.forEach((k, v) -> j.field(k.label(), v));
        j.end();
        num(j.key("throughput_rps"), throughput());
        num(j.key("offered_rate"), offeredRate);
        num(j.key("achieved_rate"), achievedRate());
        j.key("rate_kept");
        if (rateKept == null) {
            j.value((String) null);
        } else {
            j.tree(rateKept);
        }
        percentiles(j, this::percentileMillis, true);
        num(j.key("max_ms"), maxMillis());
        num(j.key("send_lag_p99_ms"), "closed".equals(mode) ? null : percentileMillis(sendLag, 99));
        num(j.key("send_lag_max_ms"), sendLag.getTotalCount() == 0 ? null : sendLag.getMaxValue() / 1000.0);
        j.field("connection_waits", connectionWaits).field("resent", resent).field("max_connections", maxConnections);
        num(j.key("duration_s"), durationSeconds);
        num(j.key("warmup_s"), warmupSeconds);
        j.field("stopped", stopped);
        for (ClassResult part : new ClassResult[] {ok, failed}) {
            j.key(part == ok ? "ok" : "failed").begin().field("requests", part.requests());
            percentiles(j, part::percentileMillis, false);
            num(j.key("max_ms"), part.maxMillis());
            j.end();
        }
        if (!classes.isEmpty()) {
            j.key("classes").beginArray();
            for (ClassResult c : classes) {
                j.begin().field("url", c.url).field("weight", c.weight).field("requests", c.requests());
                percentiles(j, c::percentileMillis, true);
                num(j.key("max_ms"), c.maxMillis());
                j.end();
            }
            j.endArray();
        }
        return j.end().toString();
    }

    /** p50 (p90 with {@code withP90}), p99 and p99.9 in ms; {@code null} when too few samples. */
    private static void percentiles(Json j, java.util.function.DoubleFunction<Double> p, boolean withP90) {
        num(j.key("p50_ms"), p.apply(50));
        if (withP90) {
            num(j.key("p90_ms"), p.apply(90));
        }
        num(j.key("p99_ms"), p.apply(99));
        num(j.key("p999_ms"), p.apply(99.9));
    }

    private static void num(Json j, Double v) {
        if (v == null) {
            j.value((String) null);
        } else {
            j.value(v.doubleValue()); // three decimals; NaN and infinities as null
        }
    }

    /** The human summary, several lines. */
    public String toText() {
        StringBuilder b = new StringBuilder();
        if ("open".equals(mode)) {
            b.append(String.format(Locale.ROOT, "open loop (Poisson arrivals), schedule %s, offered %.1f req/s -> %s%n",
                    schedule, offeredRate, target));
        } else {
            b.append(String.format(Locale.ROOT, "closed loop, %d users -> %s%n", users, target));
        }
        b.append(String.format(Locale.ROOT, "requests   %s%n", mix));
        b.append(String.format(Locale.ROOT, "measured   %.1f s after a %.1f s warm-up (not recorded)%s%n",
                durationSeconds, warmupSeconds, stopped ? "; stopped early" : maxRequestsReached
                        ? "; max requests reached" : ""));
        b.append(String.format(Locale.ROOT, "requests   %d answered, %.1f req/s", requests, throughput()));
        if ("open".equals(mode)) {
            b.append(String.format(Locale.ROOT, "; sent %.1f/s of %.1f offered: %s", achievedRate(), offeredRate,
                    Boolean.TRUE.equals(rateKept) ? "rate kept" : "RATE NOT KEPT"));
        }
        b.append(String.format(Locale.ROOT, "%n"));
        b.append(String.format(Locale.ROOT, "errors     %d", errors()));
        if (errors() > 0) {
            errorsByKind.forEach((k, v) -> {
                if (v > 0) {
                    b.append(' ').append(k.label()).append('=').append(v);
                }
            });
        }
        if (unfinished > 0) {
            b.append(String.format(Locale.ROOT, " (%d unfinished)", unfinished));
        }
        b.append(String.format(Locale.ROOT, "%n"));
        b.append(String.format(Locale.ROOT, "latency ms p50 %s  p90 %s  p99 %s  p99.9 %s  max %s  (%s)%n",
                text(percentileMillis(50)), text(percentileMillis(90)), text(percentileMillis(99)),
                text(percentileMillis(99.9)), text(maxMillis()),
                "open".equals(mode) ? "from the intended send time" : "closed loop: not a latency figure"));
        if (failed.requests() > 0) {
            b.append(String.format(Locale.ROOT, "  status < 400: %,d, p50 %s, p99 %s, p99.9 %s, max %s; status >= 400: "
                    + "%,d, p50 %s, p99 %s%n", ok.requests(), millis(ok.percentileMillis(50)),
                    millis(ok.percentileMillis(99)), millis(ok.percentileMillis(99.9)), millis(ok.maxMillis()),
                    failed.requests(), millis(failed.percentileMillis(50)), millis(failed.percentileMillis(99))));
        }
        for (int i = 0; i < classes.size(); i++) {
            ClassResult c = classes.get(i);
            b.append(String.format(Locale.ROOT, "  class %d (weight %d) %s: %,d requests, p50 %s, p99 %s, p99.9 %s, "
                    + "max %s%n", i + 1, c.weight, c.url, c.requests(), millis(c.percentileMillis(50)),
                    millis(c.percentileMillis(99)), millis(c.percentileMillis(99.9)), millis(c.maxMillis())));
        }
        if ("open".equals(mode)) {
            b.append(String.format(Locale.ROOT, "send lag   p99 %s ms  max %s ms; %d waited for a connection; "
                    + "%d connections; %d resent (connection closed before the response)%n",
                    text(percentileMillis(sendLag, 99)),
                    text(sendLag.getTotalCount() == 0 ? null : sendLag.getMaxValue() / 1000.0), connectionWaits,
                    maxConnections, resent));
        }
        b.append(String.format(Locale.ROOT, "n/a: fewer than 100/(1-p) samples for percentile p%n"));
        return b.toString();
    }

    private static String text(Double v) {
        return v == null ? "n/a" : String.format(Locale.ROOT, "%.3f", v);
    }

    private static String millis(Double v) {
        return v == null ? "n/a" : text(v) + " ms";
    }

    @Override
    public String toString() {
        return toJson();
    }
}
