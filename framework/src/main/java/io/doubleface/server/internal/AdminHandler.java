package io.doubleface.server.internal;

import io.doubleface.internal.engine.FanoutEngine;
import io.doubleface.internal.Json;
import io.doubleface.model.Configuration;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.List;

/**
 * The admin listener: {@code GET /admin} (the live HTML page, {@link AdminPage}),
 * {@code GET /admin/config}, {@code PUT /admin/config?name=<configuration>},
 * {@code GET /admin/stats} (JSON counters) and {@code GET /metrics} (Prometheus text). Runs on the
 * admin loop, apart from the measured I/O loops, so scraping does not disturb their counters.
 *
 * <p>Probes: {@code GET /ready} ({@code 200 {"ready":true}}; {@code 503
 * {"ready":false,"reason":"connecting","waiting":[...]}} until every client of the active
 * configuration has connected to every shard (warm start), one entry per client not connected
 * yet, with its backend and loop, and — when reads need no token or the request carries it — why
 * its last attempt failed; {@code 503 {"ready":false,"reason":"draining"}} from the start of
 * {@code FanoutServer.stop}) and {@code GET /live} ({@code 200} while the process answers) need no
 * credential.
 *
 * <p>Access: the state change is {@code PUT} only (a browser cannot send one cross-origin without
 * a CORS preflight, which this listener never grants). With a token, {@code PUT} needs
 * {@code Authorization: Bearer <token>} ({@code 401} otherwise; compared in constant time), and so
 * does every request when {@code tokenForReads} (the listener is not on loopback) except
 * {@code GET /admin}: that page is static (no server state in it), so it is served to anyone as
 * the login form, and its script sends the token the user types with each {@code fetch} of
 * {@code /admin/stats}, which needs it like any other read.
 *
 * <p>Sharable: stateless apart from the thread-safe engine, metrics and knobs.
 */
@ChannelHandler.Sharable
public final class AdminHandler extends SimpleChannelInboundHandler<FullHttpRequest> {

    /**
     * Readiness: {@code 200} once every backend is connected and until a drain starts, {@code 503}
     * before (connecting) and from the start of a drain: {@value}.
     */
    public static final String READY_PATH = "/ready";
    /** Liveness: {@code 200} while the process answers: {@value}. */
    public static final String LIVE_PATH = "/live";

    private final FanoutEngine engine;
    private final ServerMetrics metrics;
    private final ServerKnobs knobs;
    private final KnobsEndpoint knobsEndpoint;
    private final byte[] token; // null: no credential
    private final boolean tokenForReads;

    /**
     * @param knobs what {@code PUT /admin/config} and {@code /admin/knobs} change
     * @param token the credential of state changes, or {@code null} for none
     * @param tokenForReads whether reads need it too (required when the listener is not on loopback)
     */
    public AdminHandler(FanoutEngine engine, ServerMetrics metrics, ServerKnobs knobs, String token,
            boolean tokenForReads) {
        if (tokenForReads && token == null) {
            throw new IllegalArgumentException("tokenForReads without a token");
        }
        this.engine = engine;
        this.metrics = metrics;
        this.knobs = knobs;
        this.knobsEndpoint = new KnobsEndpoint(knobs);
        this.token = token == null ? null : token.getBytes(StandardCharsets.UTF_8);
        this.tokenForReads = tokenForReads;
    }

    /** Whether {@code req} carries the token ({@code Authorization: Bearer <token>}). */
    private boolean authorized(FullHttpRequest req) {
        String h = req.headers().get(HttpHeaderNames.AUTHORIZATION);
        if (h == null || !h.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return false;
        }
        return MessageDigest.isEqual(token, h.substring(7).trim().getBytes(StandardCharsets.UTF_8));
    }

    private static void unauthorized(ChannelHandlerContext ctx, FullHttpRequest req) {
        FullHttpResponse r = response(ctx, HttpResponseStatus.UNAUTHORIZED, "text/plain; charset=utf-8",
                "missing or wrong credential (expected: Authorization: Bearer <admin token>)\n");
        r.headers().set(HttpHeaderNames.WWW_AUTHENTICATE, "Bearer");
        write(ctx, req, r, false);
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest req) {
        if (req.decoderResult().isFailure()) {
            send(ctx, req, HttpResponseStatus.BAD_REQUEST, "text/plain; charset=utf-8", "malformed request\n", true);
            return;
        }
        QueryStringDecoder q = new QueryStringDecoder(req.uri());
        String path;
        try {
            path = q.path();
        } catch (IllegalArgumentException e) {
            send(ctx, req, HttpResponseStatus.BAD_REQUEST, "text/plain; charset=utf-8", "malformed request target\n", true);
            return;
        }
        HttpMethod m = req.method();
        if (path.equals(READY_PATH) || path.equals(LIVE_PATH)) {
            // probes (a kubelet, a balancer's health check) carry no credential; the answer says
            // nothing but up/ready
            if (!HttpMethod.GET.equals(m)) {
                notAllowed(ctx, req, "GET");
            } else if (path.equals(LIVE_PATH)) {
                send(ctx, req, HttpResponseStatus.OK, "application/json", "{\"live\":true}\n", false);
            } else if (engine.isDraining()) {
                send(ctx, req, HttpResponseStatus.SERVICE_UNAVAILABLE, "application/json",
                        "{\"ready\":false,\"reason\":\"draining\"}\n", false);
            } else if (!engine.isConnected()) {
                send(ctx, req, HttpResponseStatus.SERVICE_UNAVAILABLE, "application/json",
                        connecting(!tokenForReads || (token != null && authorized(req))), false);
            } else {
                send(ctx, req, HttpResponseStatus.OK, "application/json", "{\"ready\":true}\n", false);
            }
            return;
        }
        if (path.equals("/admin") || path.equals("/admin/")) {
            // before the token check: the page is the login form and holds no server state
            if (HttpMethod.GET.equals(m)) {
                page(ctx, req);
            } else {
                notAllowed(ctx, req, "GET");
            }
            return;
        }
        if (tokenForReads && !authorized(req)) {
            unauthorized(ctx, req);
            return;
        }
        switch (path) {
            case "/admin/config" -> {
                if (HttpMethod.GET.equals(m)) {
                    send(ctx, req, HttpResponseStatus.OK, "application/json", configJson(null), false);
                } else if (HttpMethod.PUT.equals(m)) {
                    if (token != null && !authorized(req)) {
                        unauthorized(ctx, req);
                        return;
                    }
                    List<String> names;
                    try {
                        names = q.parameters().get("name");
                    } catch (IllegalArgumentException e) {
                        names = null;
                    }
                    if (names == null || names.size() != 1 || names.get(0).isBlank()) {
                        send(ctx, req, HttpResponseStatus.BAD_REQUEST, "text/plain; charset=utf-8",
                                "missing query parameter: name=<configuration>, e.g. PUT /admin/config?name=type2a-1f2b\n", false);
                        return;
                    }
                    String previous = engine.active().name();
                    try {
                        knobs.switchTo(Configuration.parse(names.get(0)));
                    } catch (IllegalArgumentException e) {
                        send(ctx, req, HttpResponseStatus.BAD_REQUEST, "text/plain; charset=utf-8", e.getMessage() + "\n", false);
                        return;
                    } catch (RuntimeException e) {
                        send(ctx, req, HttpResponseStatus.INTERNAL_SERVER_ERROR, "text/plain; charset=utf-8",
                                "switch failed: " + e + "\n", false);
                        return;
                    }
                    send(ctx, req, HttpResponseStatus.OK, "application/json", configJson(previous), false);
                } else {
                    notAllowed(ctx, req, "GET, PUT");
                }
            }
            case "/admin/stats" -> {
                if (HttpMethod.GET.equals(m)) {
                    // the typed snapshot, serialised: the only view of the counters
                    send(ctx, req, HttpResponseStatus.OK, "application/json", metrics.snapshot().toJson(), false);
                } else {
                    notAllowed(ctx, req, "GET");
                }
            }
            case "/metrics" -> {
                if (HttpMethod.GET.equals(m)) {
                    send(ctx, req, HttpResponseStatus.OK, "text/plain; version=0.0.4; charset=utf-8", metrics.prometheus(), false);
                } else {
                    notAllowed(ctx, req, "GET");
                }
            }
            case KnobsEndpoint.PATH -> knobs(ctx, req, q); // the loop knobs, see below
            default -> send(ctx, req, HttpResponseStatus.NOT_FOUND, "text/plain; charset=utf-8",
                    "no such path: " + path + " (try /admin, /admin/config, /admin/stats, /admin/knobs, /metrics, /ready, /live)\n", false);
        }
    }

    /** The {@code /ready} answer while connecting: the clients not connected yet, with why if {@code details}. */
    private String connecting(boolean details) {
        StringBuilder b = new StringBuilder("{\"ready\":false,\"reason\":\"connecting\",\"waiting\":[");
        String sep = "";
        for (FanoutEngine.Waiting w : engine.waiting()) {
            b.append(sep).append("{\"backend\":").append(Json.quote(w.backend()))
                    .append(",\"client\":").append(Json.quote(w.client()));
            if (details && w.failure() != null) {
                b.append(",\"failure\":").append(Json.quote(w.failure()));
            }
            b.append('}');
            sep = ",";
        }
        return b.append("]}\n").toString();
    }

    /** The live page, with headers that keep it from being framed, sniffed, cached or given other scripts. */
    private static void page(ChannelHandlerContext ctx, FullHttpRequest req) {
        FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK,
                Unpooled.wrappedBuffer(AdminPage.HTML));
        r.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/html; charset=utf-8")
                .set(HttpHeaderNames.CONTENT_SECURITY_POLICY, AdminPage.CSP)
                .set("X-Content-Type-Options", "nosniff")
                .set(HttpHeaderNames.X_FRAME_OPTIONS, "DENY")
                .set("Referrer-Policy", "no-referrer")
                .set(HttpHeaderNames.CACHE_CONTROL, "no-store");
        HttpUtil.setContentLength(r, r.content().readableBytes());
        write(ctx, req, r, false);
    }

    // ---- /admin/knobs (flush mode, CPU pinning); the logic is in KnobsEndpoint ----

    private void knobs(ChannelHandlerContext ctx, FullHttpRequest req, QueryStringDecoder q) {
        if (HttpMethod.PUT.equals(req.method()) && token != null && !authorized(req)) {
            unauthorized(ctx, req);
            return;
        }
        KnobsEndpoint.Answer a = knobsEndpoint.handle(req.method(), q);
        if (a == null) {
            notAllowed(ctx, req, "GET, PUT");
        } else {
            send(ctx, req, a.status(), a.status().code() == 200 ? "application/json" : "text/plain; charset=utf-8",
                    a.body(), false);
        }
    }

    // ---- end of /admin/knobs ----

    private String configJson(String previous) {
        Json j = new Json().begin();
        j.field("active", engine.active().name());
        if (previous != null) {
            j.field("previous", previous);
        }
        j.key("loaded").beginArray();
        engine.models().forEach(mo -> j.value(mo.configuration().name()));
        j.endArray();
        j.end();
        return j + "\n";
    }

    private static void notAllowed(ChannelHandlerContext ctx, FullHttpRequest req, String allow) {
        FullHttpResponse r = response(ctx, HttpResponseStatus.METHOD_NOT_ALLOWED, "text/plain; charset=utf-8",
                "method " + req.method() + " not allowed (allowed: " + allow + ")\n");
        r.headers().set(HttpHeaderNames.ALLOW, allow);
        write(ctx, req, r, false);
    }

    private static void send(ChannelHandlerContext ctx, FullHttpRequest req, HttpResponseStatus status, String type,
            String body, boolean close) {
        write(ctx, req, response(ctx, status, type, body), close);
    }

    private static FullHttpResponse response(ChannelHandlerContext ctx, HttpResponseStatus status, String type, String body) {
        FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, ByteBufUtil.writeUtf8(ctx.alloc(), body));
        r.headers().set(HttpHeaderNames.CONTENT_TYPE, type);
        HttpUtil.setContentLength(r, r.content().readableBytes());
        return r;
    }

    private static void write(ChannelHandlerContext ctx, FullHttpRequest req, FullHttpResponse r, boolean close) {
        boolean keepAlive = !close && HttpUtil.isKeepAlive(req);
        HttpUtil.setKeepAlive(r, keepAlive);
        if (keepAlive) {
            ctx.writeAndFlush(r);
        } else {
            ctx.writeAndFlush(r).addListener(ChannelFutureListener.CLOSE);
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close();
    }
}
