package io.doubleface.internal.engine;

import io.doubleface.api.BadRequestException;
import io.doubleface.api.Backend;
import io.doubleface.api.FanoutPlan;
import io.doubleface.api.FanoutService;
import io.doubleface.api.HttpBinding;
import io.doubleface.api.HttpRequestView;
import io.doubleface.api.Replies;
import io.doubleface.api.ReplyHandler;
import io.doubleface.testing.TestRead;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import java.util.List;

/**
 * A trivial fanout service for tests: {@code GET /echo?key=N[&fan=K]} reads field 0 of record N
 * from shards 0..K-1 (default K = 1) and answers {@code N:L}, L the total reply length.
 */
public final class EchoService implements FanoutService<EchoService.Query, Integer, String> {

    /** The decoded request. */
    public record Query(long key, int fan) {}

    private static final ReplyHandler<Query, ByteBuf, Integer> LENGTH = (q, call, reply) -> reply.readableBytes();

    private final Backend<TestRead> shards;

    public EchoService(Backend<TestRead> shards) {
        this.shards = shards;
    }

    @Override
    public void plan(Query q, FanoutPlan<Query, Integer> plan) {
        for (int s = 0; s < q.fan(); s++) {
            plan.call(shards, s, TestRead.readField(q.key(), 0), LENGTH);
        }
    }

    @Override
    public String merge(Query q, Replies<Integer> replies, FanoutPlan<Query, Integer> next) {
        return q.key() + ":" + replies.values().stream().mapToInt(Integer::intValue).sum();
    }

    /** The HTTP binding of {@link EchoService} (the tests serve it on {@code GET /echo}). */
    public static final class Binding implements HttpBinding<Query, String> {

        @Override
        public Query decode(HttpRequestView query) throws BadRequestException {
            long key = number(query, "key", -1);
            int fan = (int) number(query, "fan", 1);
            if (key < 0 || key >= GeneratedShards.RECORDS) {
                throw new BadRequestException("key: missing or out of range");
            }
            return new Query(key, fan);
        }

        private static long number(HttpRequestView query, String name, long dflt) throws BadRequestException {
            List<String> v = query.query().get(name);
            if (v == null || v.isEmpty()) {
                return dflt;
            }
            try {
                return Long.parseLong(v.get(0));
            } catch (NumberFormatException e) {
                throw new BadRequestException(name + ": not a number");
            }
        }

        @Override
        public ByteBuf encode(String response, ByteBufAllocator alloc) {
            return ByteBufUtil.writeUtf8(alloc, response);
        }

        @Override
        public String contentType() {
            return "text/plain; charset=utf-8";
        }
    }
}
