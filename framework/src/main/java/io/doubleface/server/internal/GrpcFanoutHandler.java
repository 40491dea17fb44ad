package io.doubleface.server.internal;

import io.doubleface.api.BadRequestException;
import io.doubleface.api.FanoutService;
import io.doubleface.api.GrpcBinding;
import io.doubleface.internal.engine.FanoutEngine;
import io.doubleface.internal.engine.Outcome;
import io.doubleface.internal.engine.RequestStats;
import io.doubleface.internal.engine.ResponseSink;
import io.doubleface.internal.engine.RouteStats;
import io.doubleface.internal.loop.LoopGroup;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.Status;
import io.netty.channel.EventLoop;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.internal.ThreadExecutorMap;
import java.io.InputStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The gRPC upstream of one unary method: each call's request message is decoded by the
 * {@link GrpcBinding} and submitted to the {@link FanoutEngine} — the same admission as HTTP, so
 * every threading model and run-time switching apply unchanged — and the outcome is sent back as
 * the reply message or a status ({@link #status}).
 *
 * <p>Threading: the gRPC server runs with {@code directExecutor()}, so {@link #startCall} and the
 * call listener run on the event loop of the call's HTTP/2 connection — one of the server's I/O
 * loops, chosen at accept time among the active configuration's frontends (see
 * {@link FrontendLoopGroup}). That loop is the request's upstream loop. The outcome may arrive on
 * any thread; it hops to that loop, so every method of the {@link ServerCall} is called there
 * (grpc-java's server calls are not thread-safe).
 */
public final class GrpcFanoutHandler<Q, R, I, O> implements ServerCallHandler<InputStream, O> {

    /**
     * The request marshaller the method is registered with: hands the message's bytes on as they
     * are, so the handler parses them itself ({@link Call#onMessage}) and a malformed message is an
     * {@code INVALID_ARGUMENT} with the reason, not an exception escaping into grpc-java (which
     * answers {@code UNKNOWN} and logs a stack trace for every such call). No copy: the stream is
     * parsed before grpc-java closes it.
     */
    private static final MethodDescriptor.Marshaller<InputStream> PASS_THROUGH = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(InputStream value) {
            return value;
        }

        @Override
        public InputStream parse(InputStream stream) {
            return stream;
        }
    };

    /** {@code method} as registered with the gRPC server: its request bytes parsed by the handler. */
    public static <I, O> MethodDescriptor<InputStream, O> registered(MethodDescriptor<I, O> method) {
        return method.toBuilder(PASS_THROUGH, method.getResponseMarshaller()).build();
    }

    private static final Logger log = LoggerFactory.getLogger(GrpcFanoutHandler.class);

    private final FanoutEngine engine;
    private final FanoutService<Q, ?, R> service;
    private final GrpcBinding<Q, R, I, O> binding;
    private final LoopGroup io;
    private final RequestStats stats;
    private final RouteStats routeStats;

    public GrpcFanoutHandler(FanoutEngine engine, FanoutService<Q, ?, R> service, GrpcBinding<Q, R, I, O> binding,
            LoopGroup io) {
        this.engine = engine;
        this.service = service;
        this.binding = binding;
        this.io = io;
        this.stats = engine.stats();
        this.routeStats = new RouteStats("grpc " + binding.method().getFullMethodName());
    }

    /** This method's requests by outcome, and their time. */
    public RouteStats routeStats() {
        return routeStats;
    }

    /** The gRPC status of a failed request. */
    public static Status status(Outcome outcome) {
        return switch (outcome) {
            case OK -> Status.OK;
            case BAD_REQUEST, URI_TOO_LONG, BODY_TOO_LARGE, HEADERS_TOO_LARGE, VERSION_NOT_SUPPORTED -> Status.INVALID_ARGUMENT;
            case REQUEST_TIMEOUT -> Status.DEADLINE_EXCEEDED;
            case NOT_FOUND, METHOD_NOT_ALLOWED -> Status.UNIMPLEMENTED;
            case UNAVAILABLE -> Status.UNAVAILABLE;
            case OVERLOADED -> Status.RESOURCE_EXHAUSTED;
            case TIMEOUT -> Status.DEADLINE_EXCEEDED;
            case INTERNAL_ERROR -> Status.INTERNAL;
            case SERVICE_STATUS -> Status.UNKNOWN; // a StatusException carries its own code (see answer)
        };
    }

    @Override
    public ServerCall.Listener<InputStream> startCall(ServerCall<InputStream, O> call, Metadata headers) {
        EventLoop loop = currentLoop();
        if (loop == null) {
            // not on one of our loops: only if grpc-java were given another executor
            stats.answered(Outcome.INTERNAL_ERROR);
            routeStats.answered(Outcome.INTERNAL_ERROR, System.nanoTime());
            call.close(Status.INTERNAL.withDescription("gRPC call not on an I/O loop"), new Metadata());
            return new ServerCall.Listener<>() { };
        }
        call.request(2); // unary: one message; asking for two lets us refuse a second
        Call c = new Call(call, loop, headers);
        if (engine.tracesSpans()) {
            c.headers = headers;
        }
        return c;
    }

    private EventLoop currentLoop() {
        EventExecutor e = ThreadExecutorMap.currentExecutor();
        if (e instanceof EventLoop l && io.indexOf(l) >= 0) {
            return l;
        }
        for (EventLoop l : io.loops()) {
            if (l.inEventLoop()) {
                return l;
            }
        }
        return null;
    }

    /** One call: listener (on the loop) and response sink (any thread, hops to the loop). */
    private final class Call extends ServerCall.Listener<InputStream> implements ResponseSink<R>,
            io.doubleface.internal.engine.RequestInfo {
        private final ServerCall<InputStream, O> call;
        private final EventLoop loop;
        private final Metadata metadata; // what the request's RequestContext reads (never written after startCall)
        private I request;
        private boolean submitted;
        private boolean ended; // closed or cancelled; loop only
        private Metadata headers; // only when the engine traces spans

        private final long start = System.nanoTime();

        Call(ServerCall<InputStream, O> call, EventLoop loop, Metadata metadata) {
            this.call = call;
            this.loop = loop;
            this.metadata = metadata;
        }

        @Override
        public io.doubleface.internal.engine.RequestInfo info() {
            return this;
        }

        @Override
        public String route() {
            return routeStats.name();
        }

        @Override
        public String method() {
            return "POST";
        }

        @Override
        public String path() {
            return "/" + call.getMethodDescriptor().getFullMethodName();
        }

        @Override
        public String pathVariable(String name) {
            return null;
        }

        @Override
        public String header(String name) {
            String key = name.toLowerCase(java.util.Locale.ROOT);
            if (key.endsWith(Metadata.BINARY_HEADER_SUFFIX)) {
                return null;
            }
            try {
                return metadata.get(Metadata.Key.of(key, Metadata.ASCII_STRING_MARSHALLER));
            } catch (IllegalArgumentException e) {
                return null; // not a legal metadata key: no such entry
            }
        }

        @Override
        public void onMessage(InputStream message) {
            if (ended) {
                return;
            }
            if (request != null) {
                answerError(Outcome.BAD_REQUEST, "more than one request message on a unary call");
                return;
            }
            try {
                request = binding.method().parseRequest(message);
            } catch (RuntimeException e) {
                // e.g. protobuf's "Invalid protobuf byte sequence": the client's bytes, not our bug
                Status s = Status.fromThrowable(e);
                String why = s.getDescription() != null ? s.getDescription() : e.getClass().getSimpleName();
                Throwable cause = s.getCause() != null ? s.getCause() : e.getCause();
                answerError(Outcome.BAD_REQUEST, "malformed request message: " + why
                        + (cause != null && cause.getMessage() != null ? " (" + cause.getMessage() + ")" : ""));
            }
        }

        @Override
        public void onHalfClose() {
            if (ended || submitted) {
                return;
            }
            if (request == null) {
                answerError(Outcome.BAD_REQUEST, "no request message");
                return;
            }
            Q q;
            try {
                q = binding.decode(request);
            } catch (BadRequestException e) {
                answerError(Outcome.BAD_REQUEST, e.getMessage());
                return;
            } catch (io.doubleface.api.StatusException e) {
                answer(e);
                return;
            } catch (RuntimeException e) {
                stats.decodeErrors.error(log, "decoding a gRPC request failed", e);
                answerError(Outcome.INTERNAL_ERROR, "decoding the request failed");
                return;
            }
            submitted = true;
            request = null;
            Metadata h = headers;
            if (h != null) {
                headers = null;
                engine.submit(loop, service, q, this, routeStats.name(),
                        k -> h.get(Metadata.Key.of(k, Metadata.ASCII_STRING_MARSHALLER)));
            } else {
                engine.submit(loop, service, q, this);
            }
        }

        @Override
        public void onCancel() {
            ended = true; // the client went away (or its deadline passed); the outcome is dropped
        }

        private void answerError(Outcome outcome, String reason) {
            if (ended) {
                return;
            }
            ended = true;
            answered(outcome);
            call.close(status(outcome).withDescription(reason), new Metadata());
        }

        private void answered(Outcome outcome) {
            stats.answered(outcome);
            routeStats.answered(outcome, start);
        }

        @Override
        public void complete(R response) {
            if (loop.inEventLoop()) {
                completeOnLoop(response);
            } else {
                loop.execute(() -> completeOnLoop(response));
            }
        }

        private void completeOnLoop(R response) {
            if (ended) {
                answered(Outcome.OK); // the request succeeded; only its client is gone
                ReferenceCountUtil.release(response);
                return;
            }
            O reply;
            try {
                reply = binding.encode(response);
            } catch (io.doubleface.api.StatusException e) {
                ReferenceCountUtil.release(response);
                answer(e);
                return;
            } catch (RuntimeException e) {
                stats.encodeErrors.error(log, "encoding a gRPC response failed", e);
                ReferenceCountUtil.release(response);
                answerError(Outcome.INTERNAL_ERROR, "encoding the response failed");
                return;
            }
            sendOk(reply);
        }

        private void sendOk(O reply) {
            ended = true;
            answered(Outcome.OK);
            call.sendHeaders(new Metadata());
            call.sendMessage(reply);
            call.close(Status.OK, new Metadata());
        }

        @Override
        public void fail(Outcome outcome, String reason) {
            if (loop.inEventLoop()) {
                failOnLoop(outcome, reason);
            } else {
                loop.execute(() -> failOnLoop(outcome, reason));
            }
        }

        @Override
        public void fail(io.doubleface.api.StatusException answer) {
            if (loop.inEventLoop()) {
                answer(answer);
            } else {
                loop.execute(() -> answer(answer));
            }
        }

        /**
         * Answers a status of the service's choosing: a 2xx with its body as the response message
         * (parsed by the method's response marshaller), any other as the gRPC code it maps to.
         */
        private void answer(io.doubleface.api.StatusException e) {
            Outcome outcome = e.status() < 300 ? Outcome.OK : Outcome.SERVICE_STATUS;
            if (ended) {
                answered(outcome);
                return;
            }
            if (e.status() < 300) {
                O reply;
                try {
                    reply = binding.method().getResponseMarshaller().parse(new java.io.ByteArrayInputStream(e.body()));
                } catch (RuntimeException bad) {
                    stats.encodeErrors.error(log, "a 2xx StatusException's body is not a response message", bad);
                    answerError(Outcome.INTERNAL_ERROR, "the service's " + e.status() + " body is not a "
                            + binding.method().getFullMethodName() + " response message");
                    return;
                }
                sendOk(reply);
                return;
            }
            ended = true;
            answered(outcome);
            call.close(Status.fromCode(Status.Code.valueOf(e.grpcCode())).withDescription(e.getMessage()), new Metadata());
        }

        private void failOnLoop(Outcome outcome, String reason) {
            if (ended) {
                answered(outcome);
                return;
            }
            answerError(outcome, reason);
        }
    }
}
