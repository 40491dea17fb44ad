package io.doubleface.api;

import io.grpc.MethodDescriptor;

/**
 * Maps a service onto one unary gRPC method, as {@link HttpBinding} maps it onto an HTTP path:
 * decodes the request message into the typed request and encodes the typed response as the reply
 * message. Both methods run on an event loop and must not block. Thread-safe.
 *
 * <p>Status mapping of the gRPC upstream: a {@link BadRequestException} from {@link #decode}
 * gives {@code INVALID_ARGUMENT}; a shard failure or overload {@code UNAVAILABLE}; the request
 * deadline or a shard timeout {@code DEADLINE_EXCEEDED}; anything else {@code INTERNAL}.
 *
 * @param <Q> the decoded request
 * @param <R> the response
 * @param <I> the request message of the method
 * @param <O> the reply message of the method
 */
public interface GrpcBinding<Q, R, I, O> {

    /**
     * The unary method served, e.g. {@code doubleface.ycsb.v1.FanoutService/Query} (its
     * marshallers decide the wire format; protobuf-generated stubs provide one).
     *
     * @return the method's descriptor; it must be of type {@code UNARY}
     */
    MethodDescriptor<I, O> method();

    /**
     * Decodes a request message.
     *
     * @param request the call's request message
     * @return the typed request handed to the service's {@link FanoutService#plan}
     * @throws BadRequestException with a short reason for {@code INVALID_ARGUMENT}
     */
    Q decode(I request) throws BadRequestException;

    /**
     * Encodes a response as the reply message. An exception ends the call with {@code INTERNAL}.
     *
     * @param response the service's response, as {@link FanoutService#merge} returned it
     * @return the reply message sent to the client
     */
    O encode(R response);
}
