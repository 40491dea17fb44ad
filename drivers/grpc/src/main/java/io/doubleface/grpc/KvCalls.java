package io.doubleface.grpc;

import io.doubleface.api.Command;
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
import io.netty.buffer.Unpooled;

/**
 * The commands a gRPC client runs — {@link GrpcCall}s of the user's own methods and the record
 * {@link ShardRequest}s as {@code doubleface.kv.v1} calls — and gRPC statuses as
 * {@link ShardException}s. Stateless.
 */
final class KvCalls {

    private KvCalls() {}

    /**
     * Starts {@code command} (a {@link GrpcCall} or a {@link ShardRequest}) on {@code channel};
     * the listener receives the reply message ({@link #reply} turns it into the command's reply).
     *
     * @throws IllegalArgumentException for any other command
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    static ClientCall<?, ?> start(Channel channel, CallOptions options, Command<?> command,
            ClientCall.Listener<Object> listener) {
        if (command instanceof GrpcCall<?, ?> call) {
            return call.start(channel, options, (ClientCall.Listener) listener);
        }
        if (command instanceof ShardRequest request) {
            return startRecord(channel, options, request, (ClientCall.Listener) listener);
        }
        throw unknown(command);
    }

    /** The command's reply from the reply message: the message itself, or a record reply's payload. */
    static Object reply(Command<?> command, Object message) {
        if (command instanceof ShardRequest) {
            return Unpooled.wrappedBuffer(((Reply) message).getPayload().asReadOnlyByteBuffer());
        }
        return message;
    }

    /** Checks that the clients can run {@code command}. */
    static void check(Command<?> command) {
        if (!(command instanceof GrpcCall<?, ?>) && !(command instanceof ShardRequest)) {
            throw unknown(command);
        }
    }

    private static IllegalArgumentException unknown(Command<?> command) {
        return new IllegalArgumentException("command: " + command.getClass().getName()
                + " (expected: a GrpcCall, see io.doubleface.grpc.GrpcCall.of)");
    }

    /**
     * Starts the unary call of {@code request} on {@code channel}: start, ask for the reply, send
     * the message, half-close. The listener's callbacks run where the channel's executor says
     * (the drivers use {@code directExecutor}: the transport's loop, or the calling thread when the
     * call fails while starting).
     */
    static ClientCall<?, Reply> startRecord(Channel channel, CallOptions options, ShardRequest request,
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
