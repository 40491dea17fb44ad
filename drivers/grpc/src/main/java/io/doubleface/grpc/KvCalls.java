package io.doubleface.grpc;

import io.doubleface.api.ShardRequest;
import io.doubleface.driver.ShardException;
import io.doubleface.grpc.kv.v1.KvServiceGrpc;
import io.doubleface.grpc.kv.v1.ReadRequest;
import io.doubleface.grpc.kv.v1.Reply;
import io.doubleface.grpc.kv.v1.ScanRequest;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.Metadata;
import io.grpc.Status;

/** Shard requests as {@code doubleface.kv.v1} calls, and gRPC statuses as {@link ShardException}s. Stateless. */
final class KvCalls {

    private KvCalls() {}

    /**
     * Starts the unary call of {@code request} on {@code channel}: start, ask for the reply, send
     * the message, half-close. The listener's callbacks run where the channel's executor says
     * (the drivers use {@code directExecutor}: the transport's loop, or the calling thread when the
     * call fails while starting).
     */
    static ClientCall<?, Reply> start(Channel channel, CallOptions options, ShardRequest request,
            ClientCall.Listener<Reply> listener) {
        if (request.op() == ShardRequest.Op.READ) {
            ClientCall<ReadRequest, Reply> c = channel.newCall(KvServiceGrpc.getReadMethod(), options);
            c.start(listener, new Metadata());
            c.request(1);
            c.sendMessage(ReadRequest.newBuilder().setKey(request.key()).setField(request.field()).build());
            c.halfClose();
            return c;
        }
        ClientCall<ScanRequest, Reply> c = channel.newCall(KvServiceGrpc.getScanMethod(), options);
        c.start(listener, new Metadata());
        c.request(1);
        c.sendMessage(ScanRequest.newBuilder().setKey(request.key()).setCount(request.count())
                .setField(request.field()).build());
        c.halfClose();
        return c;
    }

    /**
     * The failure of a call that ended with {@code status}: {@code DEADLINE_EXCEEDED} →
     * {@code TIMEOUT}, {@code UNAVAILABLE} → {@code UNAVAILABLE}, {@code RESOURCE_EXHAUSTED} →
     * {@code OVERLOADED}, {@code CANCELLED} → {@code CLOSED} if the client closed, else
     * {@code UNAVAILABLE}; anything else → {@code SHARD_ERROR}.
     */
    static ShardException failure(int shard, Status status, boolean clientClosed) {
        ShardException.Kind kind = switch (status.getCode()) {
            case DEADLINE_EXCEEDED -> ShardException.Kind.TIMEOUT;
            case UNAVAILABLE -> ShardException.Kind.UNAVAILABLE;
            case RESOURCE_EXHAUSTED -> ShardException.Kind.OVERLOADED;
            case CANCELLED -> clientClosed ? ShardException.Kind.CLOSED : ShardException.Kind.UNAVAILABLE;
            default -> ShardException.Kind.SHARD_ERROR;
        };
        String d = status.getDescription();
        return new ShardException(kind, shard, "grpc " + status.getCode() + (d == null ? "" : ": " + d),
                status.getCause());
    }
}
