package io.doubleface.services.musuite;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/** Sends many asynchronous requests at once, at most {@code inFlight} outstanding; answers in request order. */
public final class Concurrent {

    private Concurrent() {}

    /**
     * Calls {@code send} for every request (each returning its answer's future), keeping at most
     * {@code inFlight} unanswered, and returns the answers in request order.
     */
    public static <I, O> List<O> all(List<I> requests, int inFlight, Function<I, CompletableFuture<O>> send)
            throws Exception {
        Semaphore permits = new Semaphore(inFlight);
        List<CompletableFuture<O>> futures = new ArrayList<>();
        for (I r : requests) {
            if (!permits.tryAcquire(TestServer.GENEROUS.toSeconds(), TimeUnit.SECONDS)) {
                throw new AssertionError("no answer within " + TestServer.GENEROUS);
            }
            CompletableFuture<O> f = send.apply(r);
            f.whenComplete((o, e) -> permits.release());
            futures.add(f);
        }
        List<O> out = new ArrayList<>();
        for (CompletableFuture<O> f : futures) {
            out.add(f.get(TestServer.GENEROUS.toSeconds() * 2, TimeUnit.SECONDS));
        }
        return out;
    }

    /** {@code GET pathAndQuery} on the test server, asynchronously; the body, or a failure for a non-200 status. */
    public static CompletableFuture<String> get(TestServer c, String pathAndQuery) {
        return c.http.sendAsync(java.net.http.HttpRequest.newBuilder(java.net.URI.create("http://127.0.0.1:"
                + c.server.port() + pathAndQuery)).timeout(TestServer.GENEROUS).build(),
                java.net.http.HttpResponse.BodyHandlers.ofString()).thenApply(r -> {
                    if (r.statusCode() != 200) {
                        throw new AssertionError(pathAndQuery + " -> " + r.statusCode() + " " + r.body());
                    }
                    return r.body();
                });
    }
}
