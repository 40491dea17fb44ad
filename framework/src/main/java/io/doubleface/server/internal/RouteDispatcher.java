package io.doubleface.server.internal;

import io.doubleface.api.BadRequestException;
import io.doubleface.api.ErrorEncoder;
import io.doubleface.api.StatusException;
import io.doubleface.internal.engine.FanoutEngine;
import io.doubleface.internal.engine.Outcome;
import io.doubleface.internal.engine.RequestStats;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.QueryStringDecoder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The routing and dispatch stage of the HTTP front end, the last: takes each whole request
 * ({@link RequestView}, from {@link RequestAggregator}), routes it ({@link HttpRouter}: {@code 404}
 * for an unknown path, {@code 405} with {@code Allow} for a wrong method, {@code 400} for a bad
 * %-escape in the path), decodes it with the route's binding ({@code 400} for the client's bad
 * input, {@code 500} for a binding that fails otherwise) and submits it to the {@link FanoutEngine}
 * with the route's service and a {@link RouteSink} that answers it. Every request it is handed
 * takes its place in the answer order ({@link PipelinedResponseWriter#nextSeq}) first.
 *
 * <p>Also the connection's last resort: an exception no stage handled closes it.
 *
 * <p>Threading: confined to the channel's event loop.
 */
final class RouteDispatcher extends ChannelInboundHandlerAdapter {

    private static final Logger log = LoggerFactory.getLogger(RouteDispatcher.class);

    private final FanoutEngine engine;
    private final HttpRouter router;
    final RequestStats stats;
    final ErrorEncoder errors;
    final PipelinedResponseWriter writer;

    RouteDispatcher(FanoutEngine engine, HttpRouter router, RequestStats stats, ErrorEncoder errors,
            PipelinedResponseWriter writer) {
        this.engine = engine;
        this.router = router;
        this.stats = stats;
        this.errors = errors;
        this.writer = writer;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof RequestView request) {
            dispatch(ctx, request);
        } else {
            ctx.fireChannelRead(msg);
        }
    }

    /** An answer of this stage: {@code status} with the server's error body of {@code reason}. */
    FullHttpResponse text(HttpResponseStatus status, String reason) {
        return HttpAnswers.text(errors, stats, status, reason);
    }

    private void dispatch(ChannelHandlerContext ctx, RequestView request) {
        HttpRequest req = request.head();
        boolean keepAlive = request.keepAlive();
        long seq = writer.nextSeq();
        String uri = req.uri();
        int pathEnd = QueryScan.pathEnd(uri);
        QueryStringDecoder query = null; // built only when something needs decoding (RequestView.decoder())
        String path;
        if (uri.indexOf('%', 0, pathEnd) < 0) {
            path = uri.substring(0, pathEnd); // what QueryStringDecoder.path() gives for a path without escapes
        } else {
            query = new QueryStringDecoder(uri);
            try {
                path = query.path(); // decodes lazily: a bad %-escape throws here
            } catch (IllegalArgumentException e) {
                stats.answered(Outcome.BAD_REQUEST);
                writer.park(seq, text(HttpResponseStatus.BAD_REQUEST, "malformed request target: "
                        + HttpAnswers.shortReason(e)), !keepAlive);
                return;
            }
        }
        HttpRouter.Match match = router.route(req.method(), path);
        if (match.route() == null) {
            if (match.allowed().isEmpty()) {
                stats.answered(Outcome.NOT_FOUND);
                writer.park(seq, text(HttpResponseStatus.NOT_FOUND, "no such path: " + HttpAnswers.truncate(path)),
                        !keepAlive);
                return;
            }
            StringBuilder allow = new StringBuilder();
            for (HttpMethod m : match.allowed()) {
                allow.append(allow.length() == 0 ? "" : ", ").append(m.name());
            }
            stats.answered(Outcome.METHOD_NOT_ALLOWED);
            FullHttpResponse r = text(HttpResponseStatus.METHOD_NOT_ALLOWED, "method " + req.method() + " not allowed on "
                    + HttpAnswers.truncate(path) + " (use " + allow + ")");
            r.headers().set(HttpHeaderNames.ALLOW, allow.toString());
            writer.park(seq, r, !keepAlive);
            return;
        }
        request.route(query, pathEnd, path, match.route(), match.values());
        submit(ctx, seq, keepAlive, request, path, match);
    }

    private <Q, R> void submit(ChannelHandlerContext ctx, long seq, boolean keepAlive, RequestView request, String path,
            HttpRouter.Match match) {
        @SuppressWarnings("unchecked")
        HttpRouter.Route<Q, R> route = (HttpRouter.Route<Q, R>) match.route();
        long start = System.nanoTime();
        Q decoded;
        try {
            decoded = route.binding().decode(request);
        } catch (BadRequestException e) {
            answerRefused(route, start, Outcome.BAD_REQUEST);
            writer.park(seq, text(HttpResponseStatus.BAD_REQUEST, e.getMessage()), !keepAlive);
            return;
        } catch (StatusException e) {
            answerRefused(route, start, e.status() < 300 ? Outcome.OK : Outcome.SERVICE_STATUS);
            writer.park(seq, HttpAnswers.statusAnswer(e), !keepAlive);
            return;
        } catch (IllegalArgumentException e) {
            // a bad %-escape in the query (QueryStringDecoder.parameters()), a NumberFormatException of
            // the binding's own parsing, ...: the client's input, as HttpBinding.decode documents
            answerRefused(route, start, Outcome.BAD_REQUEST);
            writer.park(seq, text(HttpResponseStatus.BAD_REQUEST, "bad request: " + HttpAnswers.shortReason(e)),
                    !keepAlive);
            return;
        } catch (RuntimeException e) {
            stats.decodeErrors.error(log, "decoding a request failed", e);
            answerRefused(route, start, Outcome.INTERNAL_ERROR);
            writer.park(seq, text(HttpResponseStatus.INTERNAL_SERVER_ERROR, "decoding the request failed"), !keepAlive);
            return;
        }
        writer.pauseIfFull(); // back-pressure: too many unanswered
        HttpRequest req = request.head();
        RouteSink<R> sink = new RouteSink<>(this, seq, !keepAlive, start, req, path, route, match.values());
        if (engine.tracesSpans()) {
            io.netty.handler.codec.http.HttpHeaders h = req.headers();
            engine.submit(ctx.channel().eventLoop(), route.service(), decoded, sink, route.stats().name(), h::get);
        } else {
            engine.submit(ctx.channel().eventLoop(), route.service(), decoded, sink);
        }
    }

    private void answerRefused(HttpRouter.Route<?, ?> route, long start, Outcome outcome) {
        stats.answered(outcome);
        route.stats().answered(outcome, start);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        log.debug("upstream connection {} failed: {}", ctx.channel().remoteAddress(), cause.toString());
        ctx.close();
    }
}
