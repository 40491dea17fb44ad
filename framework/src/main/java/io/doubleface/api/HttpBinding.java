package io.doubleface.api;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.codec.http.QueryStringDecoder;

/**
 * Maps a service onto an HTTP/1.1 path: decodes the query into the typed request and encodes
 * the typed response. Both methods run on an event loop and must not block. Thread-safe.
 *
 * @param <Q> the decoded request
 * @param <R> the response
 */
public interface HttpBinding<Q, R> {

    /** The path served, e.g. {@code /query}. */
    String path();

    /**
     * Decodes a {@code GET} request.
     *
     * @throws BadRequestException with a short reason for a {@code 400}
     */
    Q decode(QueryStringDecoder query) throws BadRequestException;

    /** Encodes a response body; the caller owns (and releases or writes) the returned buffer. */
    ByteBuf encode(R response, ByteBufAllocator alloc);

    /** The {@code Content-Type} of encoded responses. */
    default String contentType() {
        return "application/json";
    }
}
