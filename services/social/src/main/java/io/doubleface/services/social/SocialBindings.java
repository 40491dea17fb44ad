package io.doubleface.services.social;

import com.google.gson.Strictness;
import com.google.gson.stream.JsonReader;
import com.google.gson.stream.JsonToken;
import io.doubleface.api.BadRequestException;
import io.doubleface.api.BodyCodec;
import io.doubleface.api.GrpcBinding;
import io.doubleface.api.HttpBinding;
import io.doubleface.api.HttpRequestView;
import io.doubleface.services.musuite.QueryParams;
import io.doubleface.services.social.v1.ComposeReply;
import io.doubleface.services.social.v1.ComposeRequest;
import io.doubleface.services.social.v1.SocialGrpc;
import io.doubleface.services.social.v1.TimelineReply;
import io.doubleface.services.social.v1.TimelineRequest;
import io.grpc.MethodDescriptor;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufInputStream;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;

/**
 * The social network's upstream bindings, HTTP and gRPC, with the same rules:
 *
 * <ul>
 *   <li>{@code GET /social/timeline?user=U[&limit=N]} and {@code Social/ReadHomeTimeline}: a user
 *       {@code 0 .. users-1}, a limit {@code 1 ..} {@value TimelineService#MAX_LIMIT} (default
 *       {@value TimelineService#DEFAULT_LIMIT});
 *   <li>{@code POST /social/posts} with the JSON body {@code {"user":U,"text":"…"}}, or with no body
 *       and the query {@code ?user=U&text=…} (for load generators that send no bodies), and
 *       {@code Social/ComposePost}: an author {@code 0 .. users-1} and a text of 1 ..
 *       {@value ComposeService#MAX_TEXT} characters, not blank. Answers {@code 201 Created}.
 * </ul>
 *
 * Anything else is {@code 400} / {@code INVALID_ARGUMENT} with the reason. Thread-safe.
 */
public final class SocialBindings {

    private SocialBindings() {}

    /** A compose-post body as read, not yet checked. */
    record Body(String user, String text) {}

    /**
     * compose-post's JSON body: one object with members {@code user} (a number) and {@code text} (a
     * string), parsed strictly (RFC 8259); its errors become {@code 400 malformed request body: …}.
     */
    static final BodyCodec<Body> JSON_BODY = body -> {
        try {
            return parse(new JsonReader(new InputStreamReader(new ByteBufInputStream(body), StandardCharsets.UTF_8)));
        } catch (IOException | IllegalStateException e) {
            // Gson's messages: the first line says what and where; the rest is a link to its FAQ
            String m = String.valueOf(e.getMessage());
            m = m.startsWith("Use JsonReader.setStrictness") ? "not JSON" + m.substring(m.indexOf(" at line ")) : m;
            throw new IllegalArgumentException(m.lines().findFirst().orElse(m), e);
        }
    };

    private static Body parse(JsonReader r) throws IOException {
        r.setStrictness(Strictness.STRICT);
        r.beginObject();
        String user = null;
        String text = null;
        while (r.hasNext()) {
            String name = r.nextName();
            if (name.equals("user") && user == null) {
                if (r.peek() != JsonToken.NUMBER) {
                    throw new IllegalArgumentException("user: " + r.peek() + " (expected: a number)");
                }
                user = r.nextString();
            } else if (name.equals("text") && text == null) {
                if (r.peek() != JsonToken.STRING) {
                    throw new IllegalArgumentException("text: " + r.peek() + " (expected: a string)");
                }
                text = r.nextString();
            } else {
                throw new IllegalArgumentException("member '" + QueryParams.abbreviate(name) + "'"
                        + (name.equals("user") || name.equals("text") ? " given twice" : " unknown")
                        + " (expected: user, text)");
            }
        }
        r.endObject();
        try {
            if (r.peek() == JsonToken.END_DOCUMENT) {
                return new Body(user, text);
            }
        } catch (IOException e) {
            // a second value: strict mode calls it malformed
        }
        throw new IllegalArgumentException("more after the object");
    }

    /** {@return {@code raw} as a user of {@code data}} */
    static int user(SocialData data, String raw) throws BadRequestException {
        if (raw == null) {
            throw new BadRequestException("user: missing (expected: 0.." + (data.users() - 1) + ")");
        }
        long u;
        try {
            u = Long.parseLong(raw);
        } catch (NumberFormatException e) {
            throw new BadRequestException("user: '" + QueryParams.abbreviate(raw) + "' (expected: 0.."
                    + (data.users() - 1) + ")");
        }
        if (u < 0 || u >= data.users()) {
            throw new BadRequestException("user: " + u + " (expected: 0.." + (data.users() - 1) + ")");
        }
        return (int) u;
    }

    static TimelineService.Query timeline(SocialData data, String user, long limit) throws BadRequestException {
        if (limit < 1 || limit > TimelineService.MAX_LIMIT) {
            throw new BadRequestException("limit: " + limit + " (expected: 1.." + TimelineService.MAX_LIMIT + ")");
        }
        return new TimelineService.Query(user(data, user), (int) limit);
    }

    static ComposeService.Request compose(SocialData data, String user, String text) throws BadRequestException {
        int u = user(data, user);
        if (text == null || text.isBlank()) {
            throw new BadRequestException("text: missing or blank");
        }
        if (text.length() > ComposeService.MAX_TEXT) {
            throw new BadRequestException("text: " + text.length() + " characters (expected: at most "
                    + ComposeService.MAX_TEXT + ")");
        }
        return new ComposeService.Request(u, text);
    }

    private static ByteBuf utf8(String s, ByteBufAllocator alloc) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        return alloc.buffer(b.length).writeBytes(b);
    }

    /** {@code GET /social/timeline?user=U&limit=N}: the JSON of {@link TimelineResult#toJson}. */
    public static final class TimelineHttp implements HttpBinding<TimelineService.Query, TimelineResult> {
        private final SocialData data;

        /**
         * The binding for the users of {@code data}.
         *
         * @param data the data set (its user count)
         */
        public TimelineHttp(SocialData data) {
            this.data = data;
        }

        @Override
        public TimelineService.Query decode(HttpRequestView request) throws BadRequestException {
            QueryParams.requireOnly(request, "user", "limit");
            return timeline(data, request.queryParam("user"),
                    request.queryLong("limit", TimelineService.DEFAULT_LIMIT, 1, TimelineService.MAX_LIMIT));
        }

        @Override
        public ByteBuf encode(TimelineResult response, ByteBufAllocator alloc) {
            return utf8(response.toJson(), alloc);
        }
    }

    /** {@code doubleface.social.v1.Social/ReadHomeTimeline}. */
    public static final class TimelineGrpc
            implements GrpcBinding<TimelineService.Query, TimelineResult, TimelineRequest, TimelineReply> {
        private final SocialData data;

        /**
         * The binding for the users of {@code data}.
         *
         * @param data the data set (its user count)
         */
        public TimelineGrpc(SocialData data) {
            this.data = data;
        }

        @Override
        public MethodDescriptor<TimelineRequest, TimelineReply> method() {
            return SocialGrpc.getReadHomeTimelineMethod();
        }

        @Override
        public TimelineService.Query decode(TimelineRequest r) throws BadRequestException {
            return timeline(data, r.hasUser() ? Integer.toString(r.getUser()) : null,
                    r.hasLimit() ? r.getLimit() : TimelineService.DEFAULT_LIMIT);
        }

        @Override
        public TimelineReply encode(TimelineResult response) {
            return response.toProto();
        }
    }

    /** {@code POST /social/posts}: {@code 201} with the JSON of {@link Composed#toJson}. */
    public static final class ComposeHttp implements HttpBinding<ComposeService.Request, Composed> {
        private final SocialData data;

        /**
         * The binding for the users of {@code data}.
         *
         * @param data the data set (its user count)
         */
        public ComposeHttp(SocialData data) {
            this.data = data;
        }

        @Override
        public ComposeService.Request decode(HttpRequestView request) throws BadRequestException {
            QueryParams.requireOnly(request, "user", "text");
            boolean query = !request.query().isEmpty();
            if (request.body().isReadable()) {
                if (query) {
                    throw new BadRequestException("give the post either as a JSON body {\"user\":U,\"text\":\"...\"} "
                            + "or as the query parameters user and text, not both");
                }
                Body b = request.body(JSON_BODY);
                return compose(data, b.user(), b.text());
            }
            return compose(data, request.queryParam("user"), request.queryParam("text"));
        }

        @Override
        public HttpResponseStatus status(Composed response) {
            return HttpResponseStatus.CREATED;
        }

        @Override
        public ByteBuf encode(Composed response, ByteBufAllocator alloc) {
            return utf8(response.toJson(), alloc);
        }
    }

    /** {@code doubleface.social.v1.Social/ComposePost}. */
    public static final class ComposeGrpc
            implements GrpcBinding<ComposeService.Request, Composed, ComposeRequest, ComposeReply> {
        private final SocialData data;

        /**
         * The binding for the users of {@code data}.
         *
         * @param data the data set (its user count)
         */
        public ComposeGrpc(SocialData data) {
            this.data = data;
        }

        @Override
        public MethodDescriptor<ComposeRequest, ComposeReply> method() {
            return SocialGrpc.getComposePostMethod();
        }

        @Override
        public ComposeService.Request decode(ComposeRequest r) throws BadRequestException {
            return compose(data, r.hasUser() ? Integer.toString(r.getUser()) : null, r.getText());
        }

        @Override
        public ComposeReply encode(Composed response) {
            return response.toProto();
        }
    }
}
