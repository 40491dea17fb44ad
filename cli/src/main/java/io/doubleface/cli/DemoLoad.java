package io.doubleface.cli;

import io.doubleface.internal.loop.Threads;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The demo's client: a closed loop of {@code concurrency} threads, each with its own keep-alive
 * connection, each sending its next request as soon as the previous one is answered. Checks
 * every response: status 200 and a body whose SHA-256 equals the expected one.
 *
 * <p>Honest about what it is: no intended-send-time accounting (coordinated omission), no latency
 * percentiles — a functional check with a rough throughput figure. Real measurement belongs to
 * the load generator.
 *
 * <p>Threading: {@link #run} is called by one thread at a time; it creates and stops its own
 * threads and HTTP client on every call, so every run opens fresh connections (accepted on the
 * frontend loops of the configuration active at that moment).
 */
final class DemoLoad {

    /** Longest one request may take before it counts as an error: {@value} s. */
    static final long REQUEST_TIMEOUT_SECONDS = 10;

    private DemoLoad() {}

    /**
     * The outcome of one run.
     *
     * @param requests requests sent
     * @param errors responses other than 200, or no response
     * @param wrong 200 responses whose body differs from the expected one
     * @param elapsedNanos wall time of the run
     * @param digests SHA-256 of each response body, by request index ({@code null} on error)
     * @param firstProblem a description of the first error or wrong body, or {@code null}
     */
    record Result(int requests, int errors, int wrong, long elapsedNanos, byte[][] digests, String firstProblem) {
        double requestsPerSecond() {
            return elapsedNanos == 0 ? 0 : requests * 1e9 / elapsedNanos;
        }
    }

    /**
     * Sends {@code GET base + paths[i]} for every i, {@code concurrency} at a time, and checks
     * each body against {@code expected[i]} (a SHA-256).
     */
    static Result run(URI base, List<String> paths, byte[][] expected, int concurrency) throws InterruptedException {
        int n = paths.size();
        byte[][] digests = new byte[n][];
        AtomicInteger next = new AtomicInteger();
        AtomicInteger errors = new AtomicInteger();
        AtomicInteger wrong = new AtomicInteger();
        AtomicReference<String> firstProblem = new AtomicReference<>();
        ExecutorService httpThreads = Executors.newCachedThreadPool(Threads.platform("demo-http"));
        ExecutorService senders = Executors.newFixedThreadPool(concurrency, Threads.platform("demo-load"));
        try (HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(REQUEST_TIMEOUT_SECONDS)).executor(httpThreads).build()) {
            List<Future<?>> running = new ArrayList<>(concurrency);
            long start = System.nanoTime();
            for (int t = 0; t < concurrency; t++) {
                running.add(senders.submit(() -> {
                    MessageDigest sha = sha256();
                    for (int i = next.getAndIncrement(); i < n; i = next.getAndIncrement()) {
                        URI uri = base.resolve(paths.get(i));
                        try {
                            HttpResponse<byte[]> r = http.send(HttpRequest.newBuilder(uri)
                                    .timeout(Duration.ofSeconds(REQUEST_TIMEOUT_SECONDS)).build(),
                                    HttpResponse.BodyHandlers.ofByteArray());
                            if (r.statusCode() != 200) {
                                errors.incrementAndGet();
                                firstProblem.compareAndSet(null, uri + ": status " + r.statusCode() + ": "
                                        + abbreviate(new String(r.body(), StandardCharsets.UTF_8)));
                                continue;
                            }
                            digests[i] = sha.digest(r.body());
                            if (!Arrays.equals(digests[i], expected[i])) {
                                wrong.incrementAndGet();
                                firstProblem.compareAndSet(null, uri + ": body differs from the expected one: "
                                        + abbreviate(new String(r.body(), StandardCharsets.UTF_8)));
                            }
                        } catch (IOException e) {
                            errors.incrementAndGet();
                            firstProblem.compareAndSet(null, uri + ": " + e);
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : running) {
                try {
                    f.get();
                } catch (ExecutionException e) {
                    throw new IllegalStateException("demo client failed", e.getCause());
                }
            }
            long elapsed = System.nanoTime() - start;
            return new Result(n, errors.get(), wrong.get(), elapsed, digests, firstProblem.get());
        } finally {
            senders.shutdownNow();
            httpThreads.shutdown();
        }
    }

    static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is a required JDK algorithm", e);
        }
    }

    private static String abbreviate(String s) {
        String one = s.strip().replace('\n', ' ');
        return one.length() <= 120 ? one : one.substring(0, 120) + "…";
    }
}
