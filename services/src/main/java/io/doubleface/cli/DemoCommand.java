package io.doubleface.cli;

import io.doubleface.kv.KvDriver;
import io.doubleface.kv.KvLeafServer;
import io.doubleface.loop.LoopGroup;
import io.doubleface.server.FanoutServer;
import io.doubleface.services.ycsb.Size;
import io.doubleface.services.ycsb.YcsbBinding;
import io.doubleface.services.ycsb.YcsbQuery;
import io.doubleface.services.ycsb.YcsbReference;
import io.doubleface.services.ycsb.YcsbService;
import java.io.PrintWriter;
import java.net.URI;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code doubleface demo}: the embedded default end to end. Starts a KV leaf and the YCSB
 * mid-tier in this process on free loopback ports, then for each configuration switches the
 * running server to it ({@link FanoutServer#switchTo}), sends the same fixed set of queries and
 * checks every answer: status 200, and a body byte-identical to the one computed locally from
 * the records (so identical across configurations too). Prints one row per configuration with
 * throughput and the mid-tier's loop and thread counters.
 *
 * <p>A functional comparison, not a benchmark: the client shares the process and the cores with
 * the server and runs a closed loop. The load generator ({@code doubleface load}) will replace
 * this body with proper open-loop latency measurement.
 */
@Command(name = "demo",
        mixinStandardHelpOptions = true,
        versionProvider = VersionProvider.class,
        sortOptions = false,
        showDefaultValues = true,
        header = "Runs every threading model on the embedded default, checks and compares them.",
        description = {
            "Starts a KV leaf and the YCSB mid-tier in this process, switches the running server through "
                + "--configs, sends the same --requests queries under each and checks that every response is "
                + "200 and byte-identical across configurations. Prints requests/s, I/O events per loop "
                + "iteration and context switches per request. Exits 1 if any response is wrong. A smoke "
                + "comparison, not a benchmark: latency measurement comes with the load generator.",
            ""})
final class DemoCommand implements Callable<Integer> {

    /** Default configurations, one per model: {@value}. */
    static final String DEFAULT_CONFIGS = "thread-64,type1-32,type2a-1f1b,type2b,doubleface";
    /** Default requests per configuration: {@value}. */
    static final int DEFAULT_REQUESTS = 2000;
    /** Default concurrent connections: {@value}. */
    static final int DEFAULT_CONCURRENCY = 16;
    /**
     * Default I/O loops of the mid-tier: {@value}. Small and fixed, so the loop-based models get
     * the same number of loops ({@code type2a-1f1b}: 1 + 1; {@code doubleface}: 2).
     */
    static final int DEFAULT_IO_THREADS = 2;
    /** Default warm-up requests (under the first configuration, checked, not reported): {@value}. */
    static final int DEFAULT_WARMUP = 500;
    /**
     * Per-request deadline of the demo's server: {@value} s. Generous on purpose: the demo checks
     * answers, and a busy shared machine must not turn a slow answer into a 504.
     */
    static final long DEADLINE_SECONDS = 10;

    private final CliEnv env;

    @Spec
    CommandSpec spec;

    @Option(names = "--requests", paramLabel = "N", description = "Requests per configuration.")
    int requests = DEFAULT_REQUESTS;

    @Option(names = "--concurrency", paramLabel = "N", description = "Concurrent connections (closed loop).")
    int concurrency = DEFAULT_CONCURRENCY;

    @Option(names = "--fanout", paramLabel = "K", description = "Shards each query reads.")
    int fanout = YcsbBinding.DEFAULT_FANOUT;

    @Option(names = "--size", paramLabel = "small|medium|large", converter = Converters.SizeConverter.class,
            defaultValue = "small",
            description = "Reply size per shard: small 0.1 kB read, medium 1 kB record, large 20 kB scan.")
    Size size;

    @Option(names = "--configs", paramLabel = "LIST", converter = Converters.ConfigurationListConverter.class,
            defaultValue = DEFAULT_CONFIGS, description = "Configurations to run, in order, separated by commas.")
    Converters.ConfigurationList configs;

    @Option(names = "--warmup", paramLabel = "N",
            description = "Warm-up requests before the first configuration (checked, not reported).")
    int warmup = DEFAULT_WARMUP;

    @Option(names = "--io-threads", paramLabel = "N", description = "I/O event loops of the mid-tier.")
    int ioThreads = DEFAULT_IO_THREADS;

    @Option(names = "--embedded-shards", paramLabel = "N", description = "Shards of the embedded KV leaf.")
    int shards = ServeCommand.Ycsb.DEFAULT_EMBEDDED_SHARDS;

    @Option(names = "--records", paramLabel = "N", description = "Records per shard.")
    int records = LeafCommand.Kv.DEFAULT_RECORDS;

    @Option(names = "--transport", paramLabel = "auto|epoll|nio", converter = Converters.TransportConverter.class,
            defaultValue = "auto", description = "Event loop transport: auto = epoll if available, else nio.")
    LoopGroup.Transport transport;

    DemoCommand(CliEnv env) {
        this.env = env;
    }

    private void require(boolean ok, String message) {
        if (!ok) {
            throw new ParameterException(spec.commandLine(), message);
        }
    }

    @Override
    public Integer call() throws InterruptedException {
        require(requests >= 1, "--requests: " + requests + " (expected: > 0)");
        require(concurrency >= 1 && concurrency <= 1024, "--concurrency: " + concurrency + " (expected: 1..1024)");
        require(warmup >= 0, "--warmup: " + warmup + " (expected: >= 0)");
        require(shards >= 1, "--embedded-shards: " + shards + " (expected: > 0)");
        require(fanout >= 1 && fanout <= shards, "--fanout: " + fanout + " (expected: 1.." + shards
                + ", the number of shards)");
        KvLeafServer leaf = null;
        FanoutServer<YcsbQuery, byte[], YcsbService.Result> server = null;
        try {
            YcsbService service = new YcsbService(records, YcsbService.DEFAULT_SCAN_RECORDS, 0);
            try {
                leaf = KvLeafServer.builder().shards(shards).basePort(0).records(records).transport(transport).start();
                server = FanoutServer.builder(service, new YcsbBinding(shards, records))
                        .driver(new KvDriver(leaf.addresses()), true) // closed by the server
                        .port(0).ioThreads(ioThreads).transport(transport)
                        .deadline(java.time.Duration.ofSeconds(DEADLINE_SECONDS))
                        .configuration(configs.names().get(0)).start();
            } catch (IllegalArgumentException e) {
                throw new ParameterException(spec.commandLine(), e.getMessage(), e);
            } catch (IllegalStateException | UnsatisfiedLinkError e) {
                throw new CliException(e.getMessage(), e);
            }
            return run(service, leaf, server);
        } finally {
            StopSignal.closeAll(server, leaf);
        }
    }

    private int run(YcsbService service, KvLeafServer leaf, FanoutServer<YcsbQuery, byte[], YcsbService.Result> server)
            throws InterruptedException {
        PrintWriter out = env.out();
        URI base = URI.create("http://127.0.0.1:" + server.port());
        out.printf("doubleface demo %s: every threading model on the embedded default, same queries for each%n",
                VersionProvider.version());
        out.printf("  shards    embedded KV leaf: %s%n", Hosts.describe(leaf));
        out.printf("  mid-tier  %s, %d I/O loops (%s); configurations switched at run time via the engine%n",
                base, server.ioLoops().size(), server.ioLoops().isEpoll() ? "epoll" : "nio");
        out.printf("  load      %d x GET /query?fanout=%d&size=%s&key=... per configuration, %d concurrent "
                + "connections (closed loop), after %d warm-up requests%n%n",
                requests, fanout, size.label(), concurrency, warmup);
        out.flush();

        List<String> paths = new ArrayList<>(requests);
        byte[][] expected = new byte[requests][];
        Map<Long, byte[]> byKey = new HashMap<>();
        for (int i = 0; i < requests; i++) {
            long key = (i * 7919L) % records; // a prime stride: every key before any repeats
            paths.add("/query?fanout=" + fanout + "&size=" + size.label() + "&key=" + key);
            expected[i] = byKey.computeIfAbsent(key, k -> expectedDigest(service, new YcsbQuery(fanout, size, k)));
        }

        boolean ok = true;
        if (warmup > 0) {
            int n = Math.min(warmup, requests);
            DemoLoad.Result w = DemoLoad.run(base, paths.subList(0, n), Arrays.copyOf(expected, n), concurrency);
            if (w.errors() + w.wrong() > 0) {
                out.printf("warm-up under %s: %d errors, %d wrong bodies; first: %s%n", configs.names().get(0),
                        w.errors(), w.wrong(), w.firstProblem());
                ok = false;
            }
        }

        out.printf("%-16s %9s %7s %6s %9s %11s %12s %14s%n", "configuration", "requests", "errors", "wrong",
                "elapsed", "requests/s", "events/iter", "ctx-sw/request");
        byte[][] reference = null;
        int notIdentical = 0;
        List<String> problems = new ArrayList<>();
        for (String config : configs) {
            server.switchTo(config);
            MidTierCounters before = MidTierCounters.of(server);
            DemoLoad.Result r = DemoLoad.run(base, paths, expected, concurrency);
            MidTierCounters delta = MidTierCounters.of(server).minus(before);
            // /proc unreadable (no Linux, or out of file descriptors): say so rather than print a wrong number
            String switches = delta.contextSwitches() < 0 || !MidTierCounters.threadsVisible() ? "-"
                    : String.format(Locale.ROOT, "%.1f", (double) delta.contextSwitches() / r.requests());
            out.printf(Locale.ROOT, "%-16s %9d %7d %6d %7.2f s %11.0f %12.2f %14s%n", config, r.requests(),
                    r.errors(), r.wrong(), r.elapsedNanos() / 1e9, r.requestsPerSecond(), delta.eventsPerIteration(),
                    switches);
            out.flush();
            if (r.firstProblem() != null) {
                problems.add(config + ": " + r.firstProblem());
            }
            if (reference == null) {
                reference = r.digests();
            } else {
                for (int i = 0; i < requests; i++) {
                    if (r.digests()[i] != null && reference[i] != null && !Arrays.equals(r.digests()[i], reference[i])) {
                        notIdentical++;
                    }
                }
            }
            ok &= r.errors() == 0 && r.wrong() == 0;
        }
        ok &= notIdentical == 0;

        out.println();
        if (ok) {
            out.printf("ok: all %d responses per configuration were 200 and byte-identical across the %d configurations "
                    + "(and equal to the response computed from the records)%n", requests, configs.names().size());
        } else {
            out.printf("FAILED: wrong or failed responses (%d bodies differ between configurations)%n", notIdentical);
            for (String p : problems) {
                out.println("  " + p);
            }
        }
        out.println("events/iter: I/O events handled per event-loop iteration of the mid-tier's loops.");
        out.println("ctx-sw/request: context switches (voluntary + involuntary, from /proc) of the mid-tier's threads");
        out.println("  per request.");
        out.println("A smoke comparison, not a benchmark: the client shares this process and its cores and runs a");
        out.println("closed loop. Proper latency measurement (open loop, p50/p99) comes with `./doubleface load`.");
        out.flush();
        if (!ok) {
            throw new CliException("some responses were wrong (see above)");
        }
        return DoubleFaceCli.EXIT_OK;
    }

    /** SHA-256 of the body the service must answer {@code q} with ({@link YcsbReference}). */
    private byte[] expectedDigest(YcsbService service, YcsbQuery q) {
        MessageDigest sha = DemoLoad.sha256();
        return sha.digest(YcsbReference.body(service, shards, q));
    }
}
