package io.doubleface.loadgen;

import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.netty.NettyChannelBuilder;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.socket.SocketChannel;
import java.net.ConnectException;
import java.net.InetSocketAddress;

/**
 * One gRPC connection of a {@link Worker}: a grpc-java {@link ManagedChannel} of its own (one
 * HTTP/2 connection) on the worker's event loop ({@code directExecutor}: callbacks on the loop),
 * carrying one {@link GrpcQueries#METHOD} call at a time, like an HTTP connection carries one
 * request.
 *
 * <p>Outcomes map onto the HTTP recording: {@code OK} is 200; a status the server sent counts by
 * its HTTP equivalent ({@code INVALID_ARGUMENT} 400 → {@code status_4xx}, {@code UNAVAILABLE} 503
 * and {@code DEADLINE_EXCEEDED} 504 → {@code status_5xx}); a lost connection closes this
 * connection ({@code closed}), as for HTTP. The connection counts as open once the channel is
 * {@code READY}; a channel that fails before that is a failed connect.
 *
 * <p>Threading: confined to its worker's event loop.
 */
final class GrpcConnection extends Connection {

    private final EventLoop loop;
    private final ManagedChannel channel;
    private boolean connected;
    private boolean closed;
    /** True while {@link #send} runs: a call grpc-java closes while starting completes in a later task. */
    private boolean sending;
    private ClientCall<byte[], byte[]> call;

    GrpcConnection(Worker worker, EventLoop loop, Class<? extends SocketChannel> channelType, InetSocketAddress address,
            int connectTimeoutMillis) {
        super(worker);
        this.loop = loop;
        this.keepAlive = true;
        this.channel = NettyChannelBuilder.forAddress(address)
                .eventLoopGroup(loop)
                .channelType(channelType, InetSocketAddress.class)
                .directExecutor()
                .usePlaintext()
                .withOption(ChannelOption.CONNECT_TIMEOUT_MILLIS, connectTimeoutMillis)
                .withOption(ChannelOption.TCP_NODELAY, true)
                .build();
    }

    /** Starts connecting; {@link Worker#connected} or {@link Worker#connectFailed} follows. */
    void connect() {
        watch(channel.getState(true));
    }

    private void watch(ConnectivityState state) {
        if (closed) {
            return;
        }
        switch (state) {
            case READY -> {
                if (!connected) {
                    connected = true;
                    worker.connected(this);
                }
            }
            case TRANSIENT_FAILURE -> {
                if (!connected) {
                    closed = true;
                    channel.shutdownNow();
                    worker.connectFailed(new ConnectException("connection refused or timed out (grpc channel in "
                            + "TRANSIENT_FAILURE)"));
                } else {
                    close();
                }
                return;
            }
            case IDLE -> {
                if (connected) { // the HTTP/2 connection went away
                    close();
                    return;
                }
            }
            case CONNECTING, SHUTDOWN -> { }
        }
        // the callback runs on grpc-java's synchronization context: hop onto our loop
        channel.notifyWhenStateChanged(state, () -> loop.execute(() -> watch(channel.getState(false))));
    }

    @Override
    void send(long intendedNanos, boolean measuredRequest) {
        intended = intendedNanos;
        measured = measuredRequest;
        inFlight = true;
        status = 0;
        ClientCall<byte[], byte[]> c = channel.newCall(GrpcQueries.METHOD, CallOptions.DEFAULT);
        call = c;
        sending = true;
        try {
            c.start(new Listener(c), new Metadata());
            c.request(1);
            c.sendMessage(worker.grpcRequest(this));
            c.halfClose();
        } finally {
            sending = false;
        }
    }

    private final class Listener extends ClientCall.Listener<byte[]> {
        private final ClientCall<byte[], byte[]> c;

        Listener(ClientCall<byte[], byte[]> c) {
            this.c = c;
        }

        @Override
        public void onClose(Status s, Metadata trailers) {
            if (sending || !loop.inEventLoop()) {
                loop.execute(() -> ended(c, s));
            } else {
                ended(c, s);
            }
        }
    }

    private void ended(ClientCall<byte[], byte[]> c, Status s) {
        if (closed || c != call || !inFlight || abandoned) {
            return; // a call of a closed connection, or one the sweep gave up on
        }
        if (!s.isOk() && s.getCode() == Status.Code.UNAVAILABLE && s.getCause() != null) {
            close(); // the transport failed, not the server: "closed", as for HTTP
            return;
        }
        status = httpStatus(s.getCode());
        worker.completed(this);
    }

    /** The HTTP status a gRPC status corresponds to, for the 4xx/5xx error counts. */
    static int httpStatus(Status.Code code) {
        return switch (code) {
            case OK -> 200;
            case INVALID_ARGUMENT, OUT_OF_RANGE, FAILED_PRECONDITION -> 400;
            case UNAUTHENTICATED -> 401;
            case PERMISSION_DENIED -> 403;
            case NOT_FOUND, UNIMPLEMENTED -> 404;
            case RESOURCE_EXHAUSTED -> 429;
            case CANCELLED -> 499;
            case UNAVAILABLE -> 503;
            case DEADLINE_EXCEEDED -> 504;
            default -> 500;
        };
    }

    @Override
    boolean isActive() {
        return connected && !closed;
    }

    @Override
    void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (call != null && inFlight) {
            call.cancel("connection closed by the load generator", null);
        }
        channel.shutdownNow();
        if (connected) {
            loop.execute(() -> worker.closed(this));
        }
    }
}
