package io.doubleface.services.ycsb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.api.BadRequestException;
import io.doubleface.api.HttpBinding;
import io.doubleface.api.HttpRequestView;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.net.http.HttpResponse;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A service bug hit by every request (its decode throws) is answered 500 each time, counted each
 * time, and logged once per 10 s instead of a stack trace per request.
 */
@Timeout(60)
class ErrorLogTest {

    @Test
    void aFailingDecodeIsCountedEveryTimeAndLoggedOncePerInterval() throws Exception {
        try (TestCluster c = TestCluster.builder(2).configuration("doubleface").binding(real -> new HttpBinding<>() {
            @Override
            public YcsbQuery decode(HttpRequestView request) {
                throw new IllegalStateException("a bug in the binding");
            }

            @Override
            public ByteBuf encode(YcsbService.Result response, ByteBufAllocator alloc) {
                return real.encode(response, alloc);
            }
        }).start()) {
            for (int i = 0; i < 30; i++) {
                HttpResponse<String> r = c.get(new YcsbQuery(1, Size.SMALL, i));
                assertEquals(500, r.statusCode(), r.body());
                // the step, not the exception: the exception is what the log line carries
                assertEquals("decoding the request failed\n", r.body());
            }
            Map<String, Object> stats = c.stats();
            assertEquals(30, JsonDoc.path(stats, "errors", "decode").asLong());
            // one line with its stack trace (the first), the other 29 within the same 10 s counted only
            assertEquals(29, JsonDoc.path(stats, "errors", "decode_unlogged").asLong());
            assertEquals(30, JsonDoc.path(stats, "requests", "internal_error").asLong());
        }
    }

    @Test
    void aBindingAskingForAPathVariableItsRouteDoesNotHaveIsA500NotA400() throws Exception {
        try (TestCluster c = TestCluster.builder(2).configuration("doubleface").binding(real -> new HttpBinding<>() {
            @Override
            public YcsbQuery decode(HttpRequestView request) throws BadRequestException {
                request.pathParam("user"); // GET /query has no {user}
                return real.decode(request);
            }

            @Override
            public ByteBuf encode(YcsbService.Result response, ByteBufAllocator alloc) {
                return real.encode(response, alloc);
            }
        }).start()) {
            HttpResponse<String> r = c.get(new YcsbQuery(1, Size.SMALL, 1));
            assertEquals(500, r.statusCode(), r.body());
            assertEquals("decoding the request failed\n", r.body(), "the exception is logged, not answered");
            assertEquals(1, JsonDoc.path(c.stats(), "errors", "decode").asLong());
        }
    }
}
