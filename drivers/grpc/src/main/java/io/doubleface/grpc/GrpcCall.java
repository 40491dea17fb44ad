package io.doubleface.grpc;

import io.doubleface.driver.Command;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptors;
import io.doubleface.driver.spi.CallTrace;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.MetadataUtils;
import java.util.Objects;
import java.util.Map;

/**
 * One unary call of your own gRPC service for a {@code grpc://} backend, whose reply is the
 * method's response message {@code O}: the method descriptor from your generated stub
 * ({@code MyLeafGrpc.getSearchMethod()}) and the request message.
 *
 * <pre>{@code
 * Backend<GrpcCall<?, ?>> leaves = builder.backend("leaves", GrpcDriver.of("grpc://10.0.0.5:9001-9016"));
 * ...
 * plan.call(leaves, shard, GrpcCall.of(LeafGrpc.getSearchMethod(), request),
 *         (q, call, SearchReply reply) -> reply.getHitsList());
 * }</pre>
 *
 * <p>The call carries the backend's call timeout as its gRPC deadline and, if given, the
 * {@link #withHeaders headers} as request metadata. A status other than {@code OK} fails the call:
 * {@code DEADLINE_EXCEEDED} as {@code TIMEOUT}, {@code UNAVAILABLE} as {@code UNAVAILABLE},
 * {@code RESOURCE_EXHAUSTED} as {@code OVERLOADED}, any other as {@code SHARD_ERROR} with the
 * status and its description (see {@link io.doubleface.driver.ShardException}).
 *
 * <p>Immutable and reusable: one instance may be sent to many shards from many loops at once (the
 * message is only serialized, never changed).
 *
 * @param <I> the request message type
 * @param <O> the response message type (the reply)
 */
public final class GrpcCall<I, O> implements Command<O> {

    private final MethodDescriptor<I, O> method;
    private final I message;
    private final Metadata headers;

    private GrpcCall(MethodDescriptor<I, O> method, I message, Metadata headers) {
        this.method = method;
        this.message = message;
        this.headers = headers;
    }

    /**
     * A call of {@code method} with {@code message}.
     *
     * @param <I> the request message type
     * @param <O> the reply message type
     * @param method the unary method, e.g. {@code LeafGrpc.getSearchMethod()}
     * @param message the request message
     * @return the call, without request metadata
     * @throws IllegalArgumentException if {@code method} is not unary (streaming methods cannot be
     *     a fanout call: a call has exactly one reply)
     */
    public static <I, O> GrpcCall<I, O> of(MethodDescriptor<I, O> method, I message) {
        Objects.requireNonNull(method, "method");
        Objects.requireNonNull(message, "message");
        if (method.getType() != MethodDescriptor.MethodType.UNARY) {
            throw new IllegalArgumentException("method " + method.getFullMethodName() + " is " + method.getType()
                    + " (expected: UNARY)");
        }
        return new GrpcCall<>(method, message, null);
    }

    /**
     * This call with {@code headers} sent as request metadata (e.g. a tenant id or a trace
     * context). The metadata is copied; later changes to {@code headers} do not affect the call.
     *
     * @param headers the request metadata
     * @return a new call with the same method and message
     */
    public GrpcCall<I, O> withHeaders(Metadata headers) {
        Metadata copy = new Metadata();
        copy.merge(Objects.requireNonNull(headers, "headers"));
        return new GrpcCall<>(method, message, copy);
    }

    /** {@return the method called} */
    public MethodDescriptor<I, O> method() {
        return method;
    }

    /** {@return the request message} */
    public I message() {
        return message;
    }

    /**
     * Starts the call on {@code channel} with {@code listener}: start, ask for the reply, send the
     * message, half-close.
     */
    ClientCall<I, O> start(Channel channel, CallOptions options, ClientCall.Listener<O> listener,
            Map<String, String> trace) {
        ClientCall<I, O> c = channel.newCall(method, options);
        Metadata h = new Metadata();
        if (headers != null) {
            h.merge(headers);
        }
        addTrace(h, trace);
        c.start(listener, h);
        c.request(1);
        c.sendMessage(message);
        c.halfClose();
        return c;
    }

    /**
     * Calls the method and blocks for the reply ({@link ClientCalls#blockingUnaryCall}).
     *
     * @param trace the call's trace headers ({@link CallTrace}), or {@code null}
     */
    O blockingCall(Channel channel, CallOptions options, Map<String, String> trace) {
        Channel ch = channel;
        if (headers != null || trace != null) {
            Metadata h = new Metadata();
            if (headers != null) {
                h.merge(headers);
            }
            addTrace(h, trace);
            ch = ClientInterceptors.intercept(channel, MetadataUtils.newAttachHeadersInterceptor(h));
        }
        return ClientCalls.blockingUnaryCall(ch, method, options, message);
    }

    private static final Metadata.Key<String> TRACEPARENT = Metadata.Key.of("traceparent", Metadata.ASCII_STRING_MARSHALLER);
    private static final Metadata.Key<String> TRACESTATE = Metadata.Key.of("tracestate", Metadata.ASCII_STRING_MARSHALLER);

    /** Adds the call's trace headers ({@code traceparent}, …) to {@code h}, replacing any of the same name. */
    private static void addTrace(Metadata h, Map<String, String> trace) {
        if (trace == null) {
            return;
        }
        trace.forEach((k, v) -> {
            Metadata.Key<String> key = switch (k) {
                case "traceparent" -> TRACEPARENT;
                case "tracestate" -> TRACESTATE;
                default -> Metadata.Key.of(k, Metadata.ASCII_STRING_MARSHALLER);
            };
            h.removeAll(key);
            h.put(key, v);
        });
    }

    @Override
    public String toString() {
        return method.getFullMethodName();
    }
}
