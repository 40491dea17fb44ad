package io.doubleface.grpc;

import io.doubleface.driver.Command;
import io.doubleface.driver.spi.CallTrace;
import io.doubleface.driver.ShardException;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.Status;

/**
 * The commands a gRPC client runs — {@link GrpcCall}s of the user's own unary methods — and gRPC
 * statuses as {@link ShardException}s. Stateless.
 */
final class GrpcCalls {

    private GrpcCalls() {}

    /**
     * Starts {@code command} (a {@link GrpcCall}) on {@code channel}; the listener receives the
     * reply message. With OpenTelemetry on, the call carries its trace headers as metadata
     * ({@link CallTrace#headers}{@code (index)}).
     *
     * @param index the call's index in the batch being sent ({@code 0} for a single call)
     * @throws IllegalArgumentException for any other command
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    static ClientCall<?, ?> start(Channel channel, CallOptions options, Command<?> command, int index,
            ClientCall.Listener<Object> listener) {
        if (command instanceof GrpcCall<?, ?> call) {
            return call.start(channel, options, (ClientCall.Listener) listener, CallTrace.headers(index));
        }
        throw unknown(command);
    }

    /** Checks that the clients can run {@code command}. */
    static void check(Command<?> command) {
        if (!(command instanceof GrpcCall<?, ?>)) {
            throw unknown(command);
        }
    }

    private static IllegalArgumentException unknown(Command<?> command) {
        return new IllegalArgumentException("command: " + command.getClass().getName()
                + " (expected: a GrpcCall, see io.doubleface.grpc.GrpcCall.of)");
    }

    /**
     * Makes {@code channel} connect now and waits for it (warm start): completed when the channel
     * is {@code READY}; exceptionally ({@code UNAVAILABLE}) when it falls into
     * {@code TRANSIENT_FAILURE} (its reconnect backoff is reset first, so an attempt made again
     * connects at once), ({@code CLOSED}) when it is shut down.
     *
     * <p>The state watch runs on the channel's executor (the transport's thread: the channels use
     * {@code directExecutor()}).
     */
    static java.util.concurrent.CompletableFuture<Void> ready(io.grpc.ManagedChannel channel, int shard, String where) {
        java.util.concurrent.CompletableFuture<Void> done = new java.util.concurrent.CompletableFuture<>();
        if (channel.getState(false) == io.grpc.ConnectivityState.TRANSIENT_FAILURE) {
            channel.resetConnectBackoff();
        }
        watch(channel, shard, where, done);
        return done;
    }

    private static void watch(io.grpc.ManagedChannel channel, int shard, String where,
            java.util.concurrent.CompletableFuture<Void> done) {
        io.grpc.ConnectivityState s = channel.getState(true);
        switch (s) {
            case READY -> done.complete(null);
            case TRANSIENT_FAILURE -> done.completeExceptionally(new ShardException(ShardException.Kind.UNAVAILABLE,
                    shard, "cannot connect to " + where + " (channel in TRANSIENT_FAILURE)"));
            case SHUTDOWN -> done.completeExceptionally(new ShardException(ShardException.Kind.CLOSED, shard,
                    "client closed"));
            default -> channel.notifyWhenStateChanged(s, () -> watch(channel, shard, where, done));
        }
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
