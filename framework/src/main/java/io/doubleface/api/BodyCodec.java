package io.doubleface.api;

import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;

/**
 * Turns a request body into a typed value, for {@link HttpRequestView#body(BodyCodec)}: the
 * service picks the codec (Jackson, Gson, protobuf's JSON format, a hand-written parser), the
 * framework hands it the bytes and turns every failure into a {@code 400} with the reason.
 *
 * <pre>{@code
 * static final ObjectMapper JSON = new ObjectMapper();
 * static final BodyCodec<NewPost> NEW_POST = body -> JSON.readValue(new ByteBufInputStream(body), NewPost.class);
 * }</pre>
 *
 * <p>Thread-safe implementations only: one codec serves every loop.
 *
 * @param <T> the decoded type
 */
@FunctionalInterface
public interface BodyCodec<T> {

    /**
     * Decodes {@code body} (read-only; valid only during this call, so the result must not keep a
     * reference to it).
     *
     * @param body the whole request body; never empty when the framework calls (an empty body is
     *     answered {@code 400} without calling the codec)
     * @return the decoded value
     * @throws Exception if the body is malformed: the request is answered {@code 400} with the
     *     exception's message
     */
    T decode(ByteBuf body) throws Exception;

    /** {@return a codec reading the body as UTF-8 text (malformed bytes become U+FFFD, never a failure)} */
    static BodyCodec<String> utf8() {
        return body -> body.toString(StandardCharsets.UTF_8);
    }
}
