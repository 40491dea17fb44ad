package io.doubleface.cli;

import io.doubleface.api.FanoutPlan;
import io.doubleface.api.FanoutService;
import io.doubleface.api.HttpBinding;
import io.doubleface.api.HttpRequestView;
import io.doubleface.api.Replies;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.doubleface.server.FanoutServer;
import java.nio.charset.StandardCharsets;
import java.util.function.BooleanSupplier;

/**
 * {@code GET /health} of {@code serve}: answers {@code ok} with no shard call — a plan of no calls,
 * merged at once. The request still goes through everything a request does (decode, admission, the
 * active model, the engine, the response path), so it is also the framework's per-request floor
 * ({@code bench/zero-call.sh} measures it against a raw Netty server).
 *
 * <p>{@code GET /health?ready} is the readiness probe on the service port: {@code 503 connecting}
 * until the server is ready ({@link FanoutServer#isReady()}: every backend connected on every
 * loop, no drain), {@code 200 ok} after. Plain {@code /health} stays a liveness probe.
 */
final class HealthRoute implements FanoutService<Boolean, Object, Boolean>, HttpBinding<Boolean, Boolean> {

    /** The route's path: {@value}. */
    static final String PATH = "/health";

    /** The query parameter that asks for readiness: {@value}. */
    static final String READY = "ready";

    private static final byte[] OK = "ok\n".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] CONNECTING = "connecting\n".getBytes(StandardCharsets.US_ASCII);

    /** Whether the server is ready; set once it is started. */
    private volatile BooleanSupplier ready = () -> false;

    /** From now on {@code /health?ready} answers what {@code server} says ({@link FanoutServer#isReady()}). */
    void readyOf(FanoutServer server) {
        this.ready = server::isReady;
    }

    /** {@return whether the request asks for readiness} */
    @Override
    public Boolean decode(HttpRequestView request) {
        return request.query().containsKey(READY);
    }

    @Override
    public void plan(Boolean request, FanoutPlan<Boolean, Object> plan) {
        // no shard call: the merge answers at once
    }

    @Override
    public Boolean merge(Boolean request, Replies<Object> replies, FanoutPlan<Boolean, Object> next) {
        return !request || ready.getAsBoolean();
    }

    @Override
    public io.netty.handler.codec.http.HttpResponseStatus status(Boolean response) {
        return response ? io.netty.handler.codec.http.HttpResponseStatus.OK
                : io.netty.handler.codec.http.HttpResponseStatus.SERVICE_UNAVAILABLE;
    }

    @Override
    public ByteBuf encode(Boolean response, ByteBufAllocator alloc) {
        byte[] body = response ? OK : CONNECTING;
        return alloc.buffer(body.length).writeBytes(body);
    }
}
