package io.doubleface.cli;

import io.doubleface.driver.Transport;
import io.doubleface.loadgen.LoadException;
import io.doubleface.loadgen.LoadGenerator;
import io.doubleface.loadgen.LoadResult;
import io.doubleface.loadgen.RequestMix;
import io.doubleface.loadgen.Arrivals;
import io.doubleface.loadgen.Schedule;
import io.doubleface.internal.loop.Threads;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code doubleface load}: drives an HTTP or gRPC target with the load generator ({@link LoadGenerator}) and
 * prints the run's summary — human-readable, or one JSON object with {@code --json}. Ctrl-C
 * (SIGINT) stops the run and still prints what was measured.
 */
@Command(name = "load",
        mixinStandardHelpOptions = true,
        versionProvider = VersionProvider.class,
        sortOptions = false,
        showDefaultValues = true,
        header = "Drives an HTTP or gRPC target: open loop (Poisson) for latency, closed loop for capacity.",
        description = {
            "Open loop (--rate or --schedule): requests arrive as a Poisson process (or --arrivals); latency is measured from each "
                + "request's intended send time, so a stalled server shows in the percentiles. Closed loop (--users): "
                + "N connections, each sending its next request when the previous one is answered. Latency is "
                + "recorded in HdrHistogram per 1 s interval; a percentile p needs at least 100/(1-p) samples, else "
                + "it is n/a (null in --json). Exits 1 if the target cannot be reached. A grpc:// target (serve ycsb "
                + "--grpc-port) gets each /query?fanout=K&size=S&key=N path as a doubleface.ycsb.v1.FanoutService/Query "
                + "call, one call at a time per connection, recorded the same way (docs/grpc.md).",
            "",
            "Examples:",
            "  doubleface load --target http://127.0.0.1:8080 --rate 2000 --url '/query?fanout=1&size=small&key={key}'",
            "  doubleface load --rate 1000 --mix '50:/query?fanout=5&size=small&key={key},50:/query?fanout=3&size=small&key={key}'",
            "  doubleface load --schedule flash:100@30s,8000@1s,100@30s --url /query?key={key} --json",
            "  doubleface load --rate 2000 --arrivals h2:4 --url '/query?fanout=5&size=small&key={key}'",
            "  doubleface load --users 32 --duration 20s --url /query?key={key}",
            "  doubleface load --target grpc://127.0.0.1:8081 --rate 2000 --url '/query?fanout=5&size=small&key={key}'",
            ""})
final class LoadCommand implements Callable<Integer> {

    /** Default target: {@value}. */
    static final String DEFAULT_TARGET = "http://127.0.0.1:8080";

    private final CliEnv env;

    @Spec
    CommandSpec spec;

    @Option(names = "--target", paramLabel = "URL", defaultValue = DEFAULT_TARGET,
            description = "Where to send: http://HOST:PORT, or grpc://HOST:PORT (the gRPC upstream).")
    String target;

    @Option(names = "--url", paramLabel = "PATH",
            description = "The request path (or a full http:// URL, which then also sets the target); "
                    + "{key} is replaced by a random key.")
    String url;

    @Option(names = "--mix", paramLabel = "W:PATH,…",
            description = "Weighted request paths instead of --url, e.g. '50:/a?key={key},50:/b?key={key}'; a path "
                    + "may start with a method and a space ('1:POST /b?key={key}', no body), else it is a GET.")
    String mix;

    @Option(names = "--keys", paramLabel = "N", description = "{key} is drawn uniformly from 0..N-1.")
    int keys = LoadGenerator.DEFAULT_KEYS;

    @Option(names = "--rate", paramLabel = "R", description = "Open loop: requests per second (Poisson arrivals).")
    Double rate;

    @Option(names = "--schedule", paramLabel = "SPEC",
            description = "Open loop with a varying rate: steps:100@10s,1000@10s | flash:100@30s,8000@1s,100@30s | "
                    + "trace:FILE.csv (second,rate rows) | trace:var, trace:app, trace:etc (shipped 60 s traces).")
    String schedule;

    @Option(names = "--arrivals", paramLabel = "DIST",
            description = "Open loop: the inter-arrival distribution at the rate's mean: poisson (C²=1), "
                    + "deterministic (C²=0) or h2:C2 (bursty two-phase hyperexponential, C² = C2 > 1, e.g. h2:4).")
    String arrivals = "poisson";

    @Option(names = "--trace-scale", paramLabel = "R",
            description = "Scale a trace so its peak is R requests/s (default: the trace's own rates; the shipped "
                    + "traces peak at 1000/s).")
    double traceScale;

    @Option(names = "--users", paramLabel = "N", description = "Closed loop: N connections, one request at a time each.")
    Integer users;

    @Option(names = "--think", paramLabel = "DURATION", converter = Converters.DurationConverter.class,
            defaultValue = "0ms", description = "Closed loop: pause between an answer and the user's next request.")
    Duration think;

    @Option(names = "--warmup", paramLabel = "DURATION", converter = Converters.DurationConverter.class,
            defaultValue = "10s", description = "Requests run but are not recorded for this long first.")
    Duration warmup;

    @Option(names = "--duration", paramLabel = "DURATION", converter = Converters.DurationConverter.class,
            description = "Measured time after the warm-up (default: the schedule's length, else 30s).")
    Duration duration;

    @Option(names = "--max-requests", paramLabel = "N", description = "Stop after N measured requests.")
    Long maxRequests;

    @Option(names = "--max-connections", paramLabel = "N",
            description = "Open loop: most connections, opened on demand; beyond, requests wait (and it shows as latency).")
    int maxConnections = LoadGenerator.DEFAULT_MAX_CONNECTIONS;

    @Option(names = "--timeout", paramLabel = "DURATION", converter = Converters.DurationConverter.class,
            defaultValue = "5s", description = "Per request, from its intended send time.")
    Duration timeout;

    @Option(names = "--loops", paramLabel = "N", description = "Event loops (threads) of the generator.")
    int loops = 1;

    @Option(names = "--transport", paramLabel = "auto|epoll|nio", converter = Converters.TransportConverter.class,
            defaultValue = "auto", description = "Event loop transport: auto = epoll if available, else nio.")
    Transport transport;

    @Option(names = "--busy-poll", description = "Open loop: the generator's loops spin instead of sleeping between "
            + "sends (epoll only; each loop keeps its core busy), for sub-millisecond send times.")
    boolean busyPoll;

    @Option(names = "--seed", paramLabel = "N", description = "Seed of arrivals, mix and keys (default: the clock).")
    Long seed;

    @Option(names = "--hlog", paramLabel = "FILE",
            description = "Write the per-interval latency histograms to FILE, HdrHistogram log format: every "
                    + "response (untagged), the successful ones (tag ok: status below 400) and the send lag "
                    + "(tag send_lag).")
    Path hlog;

    @Option(names = "--interval", paramLabel = "DURATION", converter = Converters.DurationConverter.class,
            description = "Length of one --hlog interval, 1ms to 60s (progress stays per second). Default: 1s")
    Duration interval;

    @Option(names = "--lag-log", paramLabel = "FILE",
            description = "Open loop: write each measured send that left 1 ms or more after its intended time to FILE "
                    + "(CSV t_ms,lag_us; at most 100,000 rows): is the send lag periodic, bursty or spread?")
    Path lagLog;

    @Option(names = "--measure-file", paramLabel = "FILE",
            description = "When the warm-up ends and the measured part begins, create FILE ({\"phase\":"
                    + "\"measuring\",\"pid\":…}; written, then renamed into place): for a program that samples the "
                    + "server over exactly the measured part.")
    Path measureFile;

    @Option(names = "--json", description = "Print the summary as one JSON object on stdout.")
    boolean json;

    @Option(names = "--quiet", description = "No progress line on stderr (warnings still).")
    boolean quiet;

    LoadCommand(CliEnv env) {
        this.env = env;
    }

    private ParameterException usage(String message) {
        return new ParameterException(spec.commandLine(), message);
    }

    /** The generator these options describe; a bad combination is a usage error. */
    LoadGenerator generator() {
        int loads = (rate != null ? 1 : 0) + (schedule != null ? 1 : 0) + (users != null ? 1 : 0);
        if (loads != 1) {
            throw usage(loads == 0 ? "no load given (expected: one of --rate, --schedule or --users)"
                    : "--rate, --schedule and --users exclude each other (expected: one of them)");
        }
        if ((url == null) == (mix == null)) {
            throw usage(url == null ? "no request given (expected: --url PATH or --mix W:PATH,…)"
                    : "--url and --mix exclude each other (expected: one of them)");
        }
        try {
            URI base = URI.create(target);
            RequestMix requests;
            if (url != null && url.regionMatches(true, 0, "http://", 0, 7)) {
                URI full = URI.create(url.replace(RequestMix.KEY, "0"));
                base = full;
                int start = url.indexOf('/', 7);
                requests = RequestMix.single(start < 0 ? "/" : url.substring(start));
            } else {
                requests = url != null ? RequestMix.single(url) : RequestMix.parse(mix);
            }
            LoadGenerator.Builder b = LoadGenerator.builder(base).mix(requests).keys(keys).warmup(warmup)
                    .timeout(timeout).maxConnections(maxConnections).loops(loops).transport(transport)
                    .messages(env.err()).progress(!quiet).hlog(hlog).lagLog(lagLog).busyPoll(busyPoll);
            if (measureFile != null) {
                Path f = measureFile;
                b.onMeasureStart(() -> {
                    try {
                        ReadyFile.write(f, java.util.Map.of("phase", "measuring"));
                    } catch (java.io.UncheckedIOException e) {
                        env.err().println("load: warning: " + e.getMessage().replace("--ready-file", "--measure-file"));
                        env.err().flush();
                    }
                });
            }
            Arrivals gaps = Arrivals.parse(arrivals);
            if (users != null && (lagLog != null || busyPoll)) {
                throw usage((lagLog != null ? "--lag-log" : "--busy-poll")
                        + " with --users (expected: only with --rate or --schedule: a closed loop has no intended send times)");
            }
            if (busyPoll && transport == Transport.NIO) {
                throw usage("--busy-poll with --transport nio (expected: epoll, or auto where epoll is available)");
            }
            if (users != null && !gaps.equals(Arrivals.POISSON)) {
                throw usage("--arrivals with --users (expected: --arrivals only with --rate or --schedule)");
            }
            b.arrivals(gaps);
            if (rate != null) {
                b.rate(rate);
            } else if (schedule != null) {
                b.schedule(Schedule.parse(schedule, traceScale));
            } else {
                b.users(users).think(think);
            }
            if (duration != null) {
                b.duration(duration);
            }
            if (maxRequests != null) {
                b.maxRequests(maxRequests);
            }
            if (seed != null) {
                b.seed(seed);
            }
            if (interval != null) {
                b.interval(interval);
            }
            return b.build();
        } catch (IllegalArgumentException e) {
            throw usage(e.getMessage());
        }
    }

    @Override
    public Integer call() throws InterruptedException {
        LoadGenerator generator = generator();
        CountDownLatch printed = new CountDownLatch(1);
        // Ctrl-C: the stop signal's shutdown hook stops the generator and waits until the partial
        // result is printed; the watcher ends with the command
        Thread watcher = Threads.platform("load-stop").newThread(() -> env.stop().awaitThenClose(() -> {
            generator.stop();
            try {
                printed.await(StopSignal.CLOSE_WAIT_SECONDS, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }));
        watcher.start();
        try {
            LoadResult result = generator.run();
            if (json) {
                env.out().println(result.toJson());
            } else {
                env.out().print(result.toText());
            }
            env.out().flush();
            return DoubleFaceCli.EXIT_OK;
        } catch (LoadException e) {
            throw new CliException(e.getMessage(), e);
        } finally {
            printed.countDown();
            watcher.interrupt(); // ends the watcher without a stop request: no "stopping" log line
            watcher.join(TimeUnit.SECONDS.toMillis(StopSignal.CLOSE_WAIT_SECONDS)); // before the JVM's exit
        }
    }
}
