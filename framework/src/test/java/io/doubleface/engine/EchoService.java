package io.doubleface.engine;

import io.doubleface.api.BadRequestException;
import io.doubleface.api.FanoutPlan;
import io.doubleface.api.FanoutService;
import io.doubleface.api.HttpBinding;
import io.doubleface.api.ShardRequest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.handler.codec.http.QueryStringDecoder;
import java.util.List;

/**
 * A trivial fanout service for tests: {@code GET /echo?key=N[&fan=K]} reads field 0 of record N
 * from shards 0..K-1 (default K = 1) and answers {@code N:L}, L the total reply length.
 */
public final class EchoService implements FanoutService<EchoService.Query, Integer, String> {

    /** The decoded request. */
    public record Query(long key, int fan) {}

    @Override
    public void plan(Query q, FanoutPlan plan) {
        for (int s = 0; s < q.fan(); s++) {
            plan.call(s, ShardRequest.readField(q.key(), 0));
        }
    }

    @Override
    public Integer onReply(Query q, int call, ByteBuf reply) {
        return reply.readableBytes();
    }

    @Override
    public String merge(Query q, List<Integer> processed) {
        return q.key() + ":" + processed.stream().mapToInt(Integer::intValue).sum();
    }

    /** The HTTP binding of {@link EchoService} on {@code /echo}. */
    public static final class Binding implements HttpBinding<Query, String> {
        @Override
        public String path() {
            return "/echo";
        }

        @Override
        public Query decode(QueryStringDecoder query) throws BadRequestException {
            long key = number(query, "key", -1);
            int fan = (int) number(query, "fan", 1);
            if (key < 0 || key >= GeneratedShards.RECORDS) {
                throw new BadRequestException("key: missing or out of range");
            }
            return new Query(key, fan);
        }

        private static long number(QueryStringDecoder query, String name, long dflt) throws BadRequestException {
            List<String> v = query.parameters().get(name);
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
