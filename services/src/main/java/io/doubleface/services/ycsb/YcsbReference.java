package io.doubleface.services.ycsb;

import io.doubleface.api.ShardRequest;
import io.doubleface.data.Records;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.util.ArrayList;
import java.util.List;

/**
 * The response the YCSB service must give to a query, computed with no network, thread or
 * threading model: plan → the records' canonical replies ({@link Records#writeReply}) → onReply →
 * merge → encode. The oracle of the conformance tests and of {@code ./doubleface demo}. Stateless.
 */
public final class YcsbReference {

    private YcsbReference() {}

    /**
     * The exact response body for {@code query}.
     *
     * @param service the service (its records and scan size decide the replies)
     * @param shards the number of shards the server fans out over
     */
    public static byte[] body(YcsbService service, int shards, YcsbQuery query) {
        List<ShardRequest> calls = new ArrayList<>();
        for (int i = 0; i < query.fanout(); i++) {
            calls.add(service.command(query, i));
        }
        List<byte[]> parts = new ArrayList<>(calls.size());
        for (int i = 0; i < calls.size(); i++) {
            ByteBuf reply = Unpooled.buffer(Records.replySize(calls.get(i)));
            try {
                Records.writeReply(calls.get(i), service.records(), reply);
                parts.add(service.process(reply));
            } finally {
                reply.release();
            }
        }
        ByteBuf body = new YcsbBinding(shards, service.records())
                .encode(new YcsbService.Result(query, parts), UnpooledByteBufAllocator.DEFAULT);
        try {
            return ByteBufUtil.getBytes(body);
        } finally {
            body.release();
        }
    }
}
