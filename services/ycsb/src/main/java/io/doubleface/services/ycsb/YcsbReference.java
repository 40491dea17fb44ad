package io.doubleface.services.ycsb;

import io.doubleface.kv.KvRequest;
import io.doubleface.kv.Records;
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
        return body(service.records(), service.scanRecords(), query);
    }

    /**
     * The exact response body for {@code query} over shards holding {@code records} records each,
     * with {@code scanRecords} records per {@code large} scan. (The shard count decides only which
     * shard serves a call, not its reply.)
     */
    public static byte[] body(long records, int scanRecords, YcsbQuery query) {
        List<KvRequest> calls = new ArrayList<>();
        for (int i = 0; i < query.fanout(); i++) {
            calls.add(YcsbService.command(query, i, records, scanRecords));
        }
        List<byte[]> parts = new ArrayList<>(calls.size());
        for (int i = 0; i < calls.size(); i++) {
            ByteBuf reply = Unpooled.buffer(Records.replySize(calls.get(i)));
            try {
                Records.writeReply(calls.get(i), records, reply);
                parts.add(YcsbService.toJson(reply));
            } finally {
                reply.release();
            }
        }
        ByteBuf body = new YcsbBinding(1, records)
                .encode(new YcsbService.Result(query, parts), UnpooledByteBufAllocator.DEFAULT);
        try {
            return ByteBufUtil.getBytes(body);
        } finally {
            body.release();
        }
    }
}
