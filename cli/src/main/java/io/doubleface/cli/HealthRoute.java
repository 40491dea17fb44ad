package io.doubleface.cli;

import io.doubleface.api.FanoutPlan;
import io.doubleface.api.FanoutService;
import io.doubleface.api.HttpBinding;
import io.doubleface.api.HttpRequestView;
import io.doubleface.api.Replies;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.charset.StandardCharsets;

/**
 * {@code GET /health} of {@code serve}: answers {@code ok} with no shard call — a plan of no calls,
 * merged at once. The request still goes through everything a request does (decode, admission, the
 * active model, the engine, the response path), so it is also the framework's per-request floor
 * ({@code bench/zero-call.sh} measures it against a raw Netty server). Stateless.
 */
final class HealthRoute implements FanoutService<Boolean, Object, Boolean>, HttpBinding<Boolean, Boolean> {

    /** The route's path: {@value}. */
    static final String PATH = "/health";

    private static final byte[] OK = "ok\n".getBytes(StandardCharsets.US_ASCII);

    @Override
    public Boolean decode(HttpRequestView request) {
        return Boolean.TRUE;
    }

    @Override
    public void plan(Boolean request, FanoutPlan<Boolean, Object> plan) {
        // no shard call: the merge answers at once
    }

    @Override
    public Boolean merge(Boolean request, Replies<Object> replies, FanoutPlan<Boolean, Object> next) {
        return Boolean.TRUE;
    }

    @Override
    public ByteBuf encode(Boolean response, ByteBufAllocator alloc) {
        return alloc.buffer(OK.length).writeBytes(OK);
    }
}
