package io.doubleface.server.internal;

import io.doubleface.api.StatusException;
import io.doubleface.internal.engine.Outcome;
import io.doubleface.internal.engine.RequestInfo;
import io.doubleface.internal.engine.ResponseSink;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.util.ReferenceCountUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The completion of one request {@link RouteDispatcher} admitted: encodes the service's answer with
 * the route's binding ({@code 500} if that fails, the status of a {@link StatusException}) or makes
 * the failure's answer, counts the outcome, and parks it with the connection's
 * {@link PipelinedResponseWriter} in the request's place. Also what the engine's listeners know of
 * the request ({@link RequestInfo}).
 *
 * <p>May be called on any thread: the answer hops to the channel's loop.
 */
final class RouteSink<R> implements ResponseSink<R>, RequestInfo {

    private static final Logger log = LoggerFactory.getLogger(RouteSink.class);

    private final RouteDispatcher dispatcher;
    private final long seq;
    private final boolean close;
    private final long start;
    // what the request's RequestContext reads: the head (its headers are made on first use), path, variables
    private final HttpRequest head;
    private final String path;
    private final HttpRouter.Route<?, R> route;
    private final String[] variables;

    RouteSink(RouteDispatcher dispatcher, long seq, boolean close, long start, HttpRequest head, String path,
            HttpRouter.Route<?, R> route, String[] variables) {
        this.dispatcher = dispatcher;
        this.seq = seq;
        this.close = close;
        this.start = start;
        this.head = head;
        this.path = path;
        this.route = route;
        this.variables = variables;
    }

    @Override
    public RequestInfo info() {
        return this;
    }

    @Override
    public String route() {
        return route.stats().name();
    }

    @Override
    public String method() {
        return head.method().name();
    }

    @Override
    public String path() {
        return path;
    }

    @Override
    public String pathVariable(String name) {
        return route.variableOrNull(variables, name);
    }

    @Override
    public String header(String name) {
        synchronized (this) { // the head's headers are made on first use; handlers may ask from several threads
            return head.headers().get(name);
        }
    }

    private ChannelHandlerContext ctx() {
        return dispatcher.writer.context();
    }

    @Override
    public void complete(R response) {
        if (ctx().executor().inEventLoop()) {
            completeOnLoop(response);
        } else {
            ctx().executor().execute(() -> completeOnLoop(response));
        }
    }

    private void answered(Outcome outcome) {
        dispatcher.stats.answered(outcome);
        route.stats().answered(outcome, start);
    }

    private void park(io.netty.util.ReferenceCounted answer) {
        dispatcher.writer.park(seq, answer, close);
    }

    private void completeOnLoop(R response) {
        PipelinedResponseWriter writer = dispatcher.writer;
        if (writer.closed()) {
            answered(Outcome.OK); // the request succeeded; only its client is gone
            ReferenceCountUtil.release(response);
            return;
        }
        HttpResponseStatus status;
        ByteBuf body;
        try {
            status = route.binding().status(response);
            int code = status.code();
            if (!(code >= 200 && code <= 299) && !(code >= 400 && code <= 599)) {
                throw new IllegalStateException("status " + status + " (expected: 2xx, 4xx or 5xx)");
            }
            body = route.binding().encode(response, ctx().alloc());
        } catch (StatusException e) {
            ReferenceCountUtil.release(response);
            answered(e.status() < 300 ? Outcome.OK : Outcome.SERVICE_STATUS);
            park(HttpAnswers.statusAnswer(e));
            return;
        } catch (RuntimeException e) {
            dispatcher.stats.encodeErrors.error(log, "encoding a response failed", e);
            ReferenceCountUtil.release(response);
            answered(Outcome.INTERNAL_ERROR); // answered 500, so counted as such, not as ok
            park(dispatcher.text(HttpResponseStatus.INTERNAL_SERVER_ERROR, "encoding the response failed"));
            return;
        }
        EncodedResponse.Prefix prefix;
        try {
            prefix = writer.prefix(status, route.binding().contentType());
        } catch (RuntimeException e) {
            dispatcher.stats.encodeErrors.error(log, "encoding a response failed", e);
            body.release();
            answered(Outcome.INTERNAL_ERROR);
            park(dispatcher.text(HttpResponseStatus.INTERNAL_SERVER_ERROR, "encoding the response failed"));
            return;
        }
        answered(status.code() < 300 ? Outcome.OK : Outcome.SERVICE_STATUS);
        park(new EncodedResponse(prefix, body));
    }

    @Override
    public void fail(StatusException answer) {
        if (ctx().executor().inEventLoop()) {
            answered(answer.status() < 300 ? Outcome.OK : Outcome.SERVICE_STATUS);
            park(HttpAnswers.statusAnswer(answer));
        } else {
            ctx().executor().execute(() -> fail(answer));
        }
    }

    @Override
    public void fail(Outcome outcome, String reason) {
        if (ctx().executor().inEventLoop()) {
            failOnLoop(outcome, reason);
        } else {
            ctx().executor().execute(() -> failOnLoop(outcome, reason));
        }
    }

    private void failOnLoop(Outcome outcome, String reason) {
        answered(outcome);
        FullHttpResponse r = dispatcher.text(HttpResponseStatus.valueOf(outcome.status()), reason);
        if (outcome == Outcome.OVERLOADED) {
            r.headers().set(HttpHeaderNames.RETRY_AFTER, "1");
        }
        park(r);
    }
}
