package io.doubleface.services.ycsb;

import io.doubleface.grpc.GrpcCall;
import io.doubleface.grpc.GrpcDriver;
import io.doubleface.kv.KvRequest;
import io.doubleface.services.ycsb.kv.v1.KvServiceGrpc;
import io.doubleface.services.ycsb.kv.v1.ReadRequest;
import io.doubleface.services.ycsb.kv.v1.Reply;
import io.doubleface.services.ycsb.kv.v1.ScanRequest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.Objects;

/**
 * The records on gRPC leaves ({@code grpc://}, {@code doubleface leaf grpc}, {@link GrpcLeafServer}):
 * a READ is the unary call {@code doubleface.kv.v1.KvService/Read}, a SCAN
 * {@code KvService/Scan}, sent as {@link GrpcCall}s of the generated method descriptors — as any
 * service calls its own gRPC leaves. The reply's {@code payload} is the canonical encoding; it is
 * wrapped, not copied.
 *
 * @param driver the leaves
 */
public record GrpcRecords(GrpcDriver driver) implements RecordStore<GrpcCall<?, ?>> {

    /** @param driver the leaves, not {@code null} */
    public GrpcRecords {
        Objects.requireNonNull(driver, "driver");
    }

    @Override
    public GrpcCall<?, ?> command(int shard, KvRequest r) {
        if (r.op() == KvRequest.Op.READ) {
            return GrpcCall.of(KvServiceGrpc.getReadMethod(),
                    ReadRequest.newBuilder().setKey(r.key()).setField(r.field()).build());
        }
        return GrpcCall.of(KvServiceGrpc.getScanMethod(),
                ScanRequest.newBuilder().setKey(r.key()).setCount(r.count()).setField(r.field()).build());
    }

    @Override
    public ByteBuf canonical(KvRequest read, Object reply) {
        return Unpooled.wrappedBuffer(((Reply) reply).getPayload().asReadOnlyByteBuffer());
    }
}
