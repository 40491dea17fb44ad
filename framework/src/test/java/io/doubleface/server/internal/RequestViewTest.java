package io.doubleface.server.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.api.BadRequestException;
import io.doubleface.api.BodyCodec;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link RequestView}: what a binding reads of a request, and its messages for bad input. */
class RequestViewTest {

    private static RequestView view(String uri, ByteBuf body) {
        RequestView v = new RequestView();
        v.request(new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, uri), body, true);
        int pathEnd = QueryScan.pathEnd(uri);
        v.route(null, pathEnd, uri.substring(0, pathEnd), null, null);
        return v;
    }

    @Test
    void queryParametersAreReadWhereTheyAre() throws BadRequestException {
        RequestView v = view("/echo?key=42&size=small", null);
        assertEquals("/echo", v.path());
        assertEquals(HttpMethod.GET, v.method());
        assertEquals("small", v.queryParam("size"));
        assertNull(v.queryParam("fan"));
        assertEquals(42, v.queryLong("key", -1, 0, 100));
        assertEquals(7, v.queryLong("fan", 7, 0, 100));
        assertEquals(List.of("42"), v.query().get("key"));
    }

    @Test
    void aRepeatedParameterOrANumberOutOfRangeIsTheClientsError() {
        RequestView v = view("/echo?key=1&key=2&n=500", null);
        assertEquals("key: given 2 times (expected: once)",
                assertThrows(BadRequestException.class, () -> v.queryParam("key")).getMessage());
        assertThrows(BadRequestException.class, () -> v.queryLong("n", 0, 0, 100));
    }

    @Test
    void anEscapedQueryIsDecodedAndABadEscapeNamed() throws BadRequestException {
        assertEquals("a b", view("/echo?q=a%20b", null).queryParam("q"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> view("/echo?q=%zz", null).query());
        assertTrue(e.getMessage().startsWith("malformed query string: "), e.getMessage());
    }

    @Test
    void aRequestWithoutBodyReadsEmptyAndACodecNeedsOne() {
        RequestView v = view("/echo", null);
        assertEquals(0, v.body().readableBytes());
        assertEquals("request body: empty (expected: a body)",
                assertThrows(BadRequestException.class, () -> v.body(b -> b.toString(StandardCharsets.UTF_8)))
                        .getMessage());
    }

    @Test
    void theBodyIsReadOnlyAndACodecFailureIsABadRequestWithItsFirstLine() throws BadRequestException {
        CompositeByteBuf body = Unpooled.compositeBuffer();
        body.addComponent(true, Unpooled.copiedBuffer("{\"a\":", StandardCharsets.UTF_8));
        body.addComponent(true, Unpooled.copiedBuffer("1}", StandardCharsets.UTF_8));
        try {
            RequestView v = view("/echo", body);
            assertTrue(v.body().isReadOnly());
            assertEquals("{\"a\":1}", v.body(b -> b.toString(StandardCharsets.UTF_8)));
            BodyCodec<Object> failing = b -> {
                throw new IllegalStateException("unexpected token\nat line 1");
            };
            assertEquals("malformed request body: unexpected token",
                    assertThrows(BadRequestException.class, () -> v.body(failing)).getMessage());
            assertEquals(7, body.readableBytes(), "reading leaves the body as it was");
        } finally {
            body.release();
        }
    }

    @Test
    void clearedItHoldsNothing() {
        RequestView v = view("/echo?x=1", null);
        v.route(new QueryStringDecoder("/echo?x=1"), 5, "/echo", null, null);
        v.clear();
        assertNull(v.head());
        assertNull(v.path());
    }
}
