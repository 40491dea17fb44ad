package io.doubleface.api;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.codec.http.HttpResponseStatus;

/**
 * Maps a service onto an HTTP/1.1 route ({@code FanoutServer.Builder#route}): decodes the request
 * — path variables, query, headers, body — into the typed request and encodes the typed response.
 * Both methods run on an event loop and must not block. Thread-safe.
 *
 * <pre>{@code
 * final class PostBinding implements HttpBinding<NewPost, Long> {
 *     public NewPost decode(HttpRequestView req) throws BadRequestException {
 *         long user = req.pathLong("user");                 // from "/users/{user}/posts"
 *         return req.body(JSON_POST).withAuthor(user);      // body through the codec you pick
 *     }
 *     public ByteBuf encode(Long id, ByteBufAllocator alloc) {
 *         return ByteBufUtil.writeAscii(alloc, "{\"id\":" + id + "}");
 *     }
 * }
 * }</pre>
 *
 * @param <Q> the decoded request
 * @param <R> the response
 */
public interface HttpBinding<Q, R> {

    /**
     * Decodes a request that matched the route.
     *
     * @param request the request; valid only during this call (keep values, not the view)
     * @return the typed request handed to the service's {@link FanoutService#plan}
     * @throws BadRequestException with a short reason for a {@code 400}. An
     *     {@link IllegalArgumentException} (e.g. a {@link NumberFormatException} of
     *     {@code Long.parseLong}, a malformed %-escape in the query) is also answered {@code 400},
     *     with {@code bad request: } and its message; a {@link StatusException} answers its own
     *     status and body; any other exception is a {@code 500} and is logged.
     */
    Q decode(HttpRequestView request) throws BadRequestException;

    /**
     * Encodes a response body; the caller owns (and releases or writes) the returned buffer. A
     * {@link StatusException} answers its own status and body (release {@code response} first if
     * it is reference-counted); any other exception answers {@code 500}. A response that is itself a buffer (e.g. a composite of
     * retained reply buffers, see {@link Replies}) can be returned as it is; a reference-counted
     * response that is not returned, nor held by the returned buffer, must be released here.
     *
     * @param response the service's response, as {@link FanoutService#merge} returned it
     * @param alloc the connection's allocator, to allocate the body from
     * @return the response body; the caller takes ownership
     */
    ByteBuf encode(R response, ByteBufAllocator alloc);

    /**
     * The status of a response, decided before {@link #encode} (default {@code 200 OK}); e.g.
     * {@code 201 Created} for a POST that created something, or {@code 404 Not Found} for a response
     * that says nothing was found, with the body {@link #encode} writes. A {@code 2xx}, {@code 4xx}
     * or {@code 5xx}; any other status, or an exception, answers {@code 500}. (To fail from
     * {@code plan} or {@code merge} without a response object, throw a {@link StatusException}.)
     *
     * @param response the service's response, as {@link FanoutService#merge} returned it
     * @return the response status
     */
    default HttpResponseStatus status(R response) {
        return HttpResponseStatus.OK;
    }

    /** {@return the {@code Content-Type} of encoded responses (default {@code application/json})} */
    default String contentType() {
        return "application/json";
    }
}
