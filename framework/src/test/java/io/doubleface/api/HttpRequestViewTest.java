package io.doubleface.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.QueryStringDecoder;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The query helpers {@link HttpRequestView} gives every binding: {@code queryInt} and {@code queryList}. */
class HttpRequestViewTest {

    static HttpRequestView view(String uri) {
        Map<String, List<String>> query = new QueryStringDecoder(uri).parameters();
        return new HttpRequestView() {
            @Override
            public HttpMethod method() {
                return HttpMethod.GET;
            }

            @Override
            public String path() {
                return "/";
            }

            @Override
            public String pathParam(String name) {
                return null;
            }

            @Override
            public Map<String, List<String>> query() {
                return query;
            }

            @Override
            public HttpHeaders headers() {
                return new DefaultHttpHeaders();
            }

            @Override
            public ByteBuf body() {
                return Unpooled.EMPTY_BUFFER;
            }

            @Override
            public <T> T body(BodyCodec<T> codec) {
                throw new UnsupportedOperationException();
            }
        };
    }

    static String reason(Executable e) {
        return assertThrows(BadRequestException.class, e::run).getMessage();
    }

    @FunctionalInterface
    interface Executable {
        void run() throws Exception;
    }

    @Test
    void queryIntReadsAnIntInRangeOrTheDefault() throws Exception {
        assertEquals(7, view("/?k=7").queryInt("k", 10, 1, 100));
        assertEquals(10, view("/").queryInt("k", 10, 1, 100));
        assertEquals("k: 0 (expected: 1..100)", reason(() -> view("/?k=0").queryInt("k", 10, 1, 100)));
        assertEquals("k: 'x' (expected: 1..100)", reason(() -> view("/?k=x").queryInt("k", 10, 1, 100)));
        assertEquals("k: 99999999999 (expected: 1..2147483647)",
                reason(() -> view("/?k=99999999999").queryInt("k", 1, 1, Integer.MAX_VALUE)));
        assertEquals("k: given 2 times (expected: once)", reason(() -> view("/?k=1&k=2").queryInt("k", 1, 1, 9)));
    }

    @Test
    void queryListSplitsOneValueAndRefusesEmptyItemsAndTooMany() throws Exception {
        assertEquals(List.of("3", "17", "42"), view("/?terms=3,17,42").queryList("terms", ',', 10));
        assertEquals(List.of("one"), view("/?terms=one").queryList("terms", ',', 10));
        assertNull(view("/").queryList("terms", ',', 10));
        assertEquals("terms: empty item in '3,,4' (expected: items separated by ',')",
                reason(() -> view("/?terms=3,,4").queryList("terms", ',', 10)));
        assertEquals("terms: empty item in '' (expected: items separated by ',')",
                reason(() -> view("/?terms=").queryList("terms", ',', 10)));
        assertEquals("terms: empty item in 'a,' (expected: items separated by ',')",
                reason(() -> view("/?terms=a,").queryList("terms", ',', 10)));
        assertEquals("terms: more than 2 items", reason(() -> view("/?terms=a,b,c").queryList("terms", ',', 2)));
        assertEquals("terms: given 2 times (expected: once)",
                reason(() -> view("/?terms=a&terms=b").queryList("terms", ',', 2)));
    }
}
