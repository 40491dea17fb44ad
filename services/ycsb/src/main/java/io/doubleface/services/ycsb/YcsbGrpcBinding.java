package io.doubleface.services.ycsb;

import com.google.protobuf.UnsafeByteOperations;
import io.doubleface.api.BadRequestException;
import io.doubleface.api.GrpcBinding;
import io.doubleface.services.ycsb.v1.FanoutServiceGrpc;
import io.doubleface.services.ycsb.v1.QueryReply;
import io.doubleface.services.ycsb.v1.QueryRequest;
import io.grpc.MethodDescriptor;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.util.concurrent.ThreadLocalRandom;

/**
 * {@code doubleface.ycsb.v1.FanoutService/Query} for the {@link YcsbService}: the gRPC twin of
 * {@link YcsbBinding}, with the same parameters, defaults, limits and error texts, and a reply
 * whose {@code body} is byte for byte the HTTP endpoint's response body for the same query.
 * Thread-safe.
 */
public final class YcsbGrpcBinding implements GrpcBinding<YcsbQuery, YcsbService.Result, QueryRequest, QueryReply> {

    private final int shards;
    private final long records;
    private final YcsbBinding http;

    public YcsbGrpcBinding(int shards, long records) {
        this.shards = shards;
        this.records = records;
        this.http = new YcsbBinding(shards, records);
    }

    @Override
    public MethodDescriptor<QueryRequest, QueryReply> method() {
        return FanoutServiceGrpc.getQueryMethod();
    }

    @Override
    public YcsbQuery decode(QueryRequest r) throws BadRequestException {
        int fanout = Math.min(YcsbBinding.DEFAULT_FANOUT, shards);
        if (r.hasFanout()) {
            fanout = r.getFanout();
            if (fanout < 1 || fanout > shards) {
                throw new BadRequestException("fanout: " + fanout + " (expected: 1.." + shards + ", the number of shards)");
            }
        }
        Size size = Size.SMALL;
        if (r.hasSize()) {
            size = Size.parse(r.getSize());
            if (size == null) {
                String s = r.getSize();
                throw new BadRequestException("size: '" + (s.length() <= 40 ? s : s.substring(0, 40) + "…")
                        + "' (expected: small, medium or large)");
            }
        }
        long key;
        if (r.hasKey()) {
            key = r.getKey();
            if (key < 0 || key > records - 1) {
                throw new BadRequestException("key: " + key + " (expected: 0.." + (records - 1) + ")");
            }
        } else {
            key = ThreadLocalRandom.current().nextLong(records);
        }
        return new YcsbQuery(fanout, size, key);
    }

    @Override
    public QueryReply encode(YcsbService.Result response) {
        ByteBuf body = http.encode(response, UnpooledByteBufAllocator.DEFAULT);
        try {
            byte[] bytes = new byte[body.readableBytes()];
            body.readBytes(bytes);
            return QueryReply.newBuilder().setBody(UnsafeByteOperations.unsafeWrap(bytes)).build();
        } finally {
            body.release();
        }
    }
}
