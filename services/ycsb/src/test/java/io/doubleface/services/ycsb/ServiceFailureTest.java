package io.doubleface.services.ycsb;


import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.api.BadRequestException;
import io.doubleface.api.FanoutPlan;
import io.doubleface.api.HttpRequestView;
import io.doubleface.api.Replies;
import io.doubleface.api.FanoutService;
import io.doubleface.api.HttpBinding;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.codec.http.QueryStringDecoder;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.FieldSource;

/**
 * A service step or the response encoding that throws gives that request a 500 with a reason
 * naming the step — under every model, exactly once, without leaking the shard replies — and the
 * other requests are unaffected.
 */
class ServiceFailureTest {

    static final int SHARDS = 20;
    static final List<String> MODELS = Models.ALL;

    static final long PLAN_FAILS = 11;
    static final long REPLY_FAILS = 12;
    static final long MERGE_FAILS = 13;
    static final long ENCODE_FAILS = 14;

    /** The YCSB service with a bug for some keys. */
    static final class Faulty implements FanoutService<YcsbQuery, byte[], YcsbService.Result> {
        final YcsbService inner;

        Faulty(YcsbService inner) {
            this.inner = inner;
        }

        @Override
        public void plan(YcsbQuery q, FanoutPlan<YcsbQuery, byte[]> plan) {
            inner.plan(q, new InterceptingPlan<>(plan, (r, call, reply, h) -> {
                if (r.key() == REPLY_FAILS && call == 2) {
                    throw new IllegalStateException("boom in onReply");
                }
                return h.onReply(r, call, reply);
            }));
            if (q.key() == PLAN_FAILS) {
                throw new IllegalStateException("boom in plan");
            }
        }

        @Override
        public YcsbService.Result merge(YcsbQuery q, Replies<byte[]> replies, FanoutPlan<YcsbQuery, byte[]> next) {
            if (q.key() == MERGE_FAILS) {
                throw new IllegalStateException("boom in merge");
            }
            return inner.merge(q, replies, next);
        }
    }

    /** The YCSB binding, failing to encode one key. */
    static HttpBinding<YcsbQuery, YcsbService.Result> faultyEncoding(HttpBinding<YcsbQuery, YcsbService.Result> inner) {
        return new HttpBinding<>() {
            @Override
            public YcsbQuery decode(HttpRequestView query) throws BadRequestException {
                return inner.decode(query);
            }

            @Override
            public ByteBuf encode(YcsbService.Result r, ByteBufAllocator alloc) {
                if (r.query().key() == ENCODE_FAILS) {
                    throw new IllegalStateException("boom in encode");
                }
                return inner.encode(r, alloc);
            }
        };
    }

    @ParameterizedTest(name = "{0}")
    @FieldSource("MODELS")
    void failingServiceStepGives500NamingItAndOtherRequestsGoOn(String model) throws Exception {
        try (TestCluster cluster = TestCluster.builder(SHARDS).configuration(model).wrap(Faulty::new)
                .binding(ServiceFailureTest::faultyEncoding).start()) {
            Map<Long, String> steps = Map.of(PLAN_FAILS, "plan", REPLY_FAILS, "onReply", MERGE_FAILS, "merge",
                    ENCODE_FAILS, "encod");
            int good = 0;
            for (int round = 0; round < 2; round++) {
                for (long key = 9; key <= 16; key++) {
                    YcsbQuery q = new YcsbQuery(5, Size.MEDIUM, key);
                    HttpResponse<String> r = cluster.get(q);
                    String step = steps.get(key);
                    if (step == null) {
                        assertEquals(200, r.statusCode(), r.body());
                        assertEquals(cluster.expected(q), r.body());
                        good++;
                    } else {
                        assertEquals(500, r.statusCode(), model + " key " + key + ": " + r.body());
                        assertTrue(r.body().contains(step), "reason should name " + step + ": " + r.body());
                    }
                }
            }
            Map<String, Object> stats = cluster.stats();
            assertEquals(2 * steps.size(), JsonDoc.path(stats, "requests", "internal_error").asLong(), "internal_error");
            assertEquals(good, JsonDoc.path(stats, "requests", "ok").asLong(), "ok counts only the successful responses");
        }
    }
}
