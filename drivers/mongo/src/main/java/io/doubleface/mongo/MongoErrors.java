package io.doubleface.mongo;

import com.mongodb.MongoClientException;
import com.mongodb.MongoException;
import com.mongodb.MongoOperationTimeoutException;
import com.mongodb.MongoServerException;
import com.mongodb.MongoSocketException;
import com.mongodb.MongoSocketReadTimeoutException;
import com.mongodb.MongoTimeoutException;
import com.mongodb.connection.ClusterDescription;
import com.mongodb.connection.ServerDescription;
import com.mongodb.connection.ServerType;
import io.doubleface.driver.ShardException;

/**
 * Maps MongoDB driver exceptions onto {@link ShardException.Kind}s.
 *
 * <table>
 *   <caption>mapping</caption>
 *   <tr><th>driver exception</th><th>kind</th></tr>
 *   <tr><td>{@link MongoSocketReadTimeoutException}</td><td>TIMEOUT</td></tr>
 *   <tr><td>{@link MongoTimeoutException}, {@link MongoOperationTimeoutException} (CSOT, server
 *       selection, pool wait)</td><td>if the shard's monitor sees no server: {@link #down}
 *       (UNAVAILABLE, or TIMEOUT if the monitor timed out too); else TIMEOUT</td></tr>
 *   <tr><td>{@link MongoSocketException} (open, read, write, closed)</td><td>UNAVAILABLE</td></tr>
 *   <tr><td>{@link MongoServerException} (command and query errors)</td><td>SHARD_ERROR</td></tr>
 *   <tr><td>{@code IllegalStateException} "state should be: open" (client closed)</td><td>CLOSED</td></tr>
 *   <tr><td>anything else</td><td>UNAVAILABLE</td></tr>
 * </table>
 */
final class MongoErrors {

    private MongoErrors() {}

    /**
     * @param downCause what the shard's server monitor last failed with, or {@code null} if it
     *     last saw the server (or has not looked yet): a server-selection timeout is then the
     *     server's absence, not a slow call
     */
    static ShardException map(Throwable t, int shard, String address, Throwable downCause, boolean closed) {
        if (closed) {
            return new ShardException(ShardException.Kind.CLOSED, shard, "client closed", t);
        }
        String what = address + ": " + t.getMessage();
        if (t instanceof MongoSocketReadTimeoutException) {
            return new ShardException(ShardException.Kind.TIMEOUT, shard, what, t);
        }
        if (t instanceof MongoTimeoutException) { // CSOT, server selection or connection checkout
            return downCause != null ? down(shard, address, downCause)
                    : new ShardException(ShardException.Kind.TIMEOUT, shard, what, t);
        }
        if (t instanceof MongoSocketException) {
            return new ShardException(ShardException.Kind.UNAVAILABLE, shard, what, t);
        }
        if (t instanceof MongoServerException) {
            return new ShardException(ShardException.Kind.SHARD_ERROR, shard, what, t);
        }
        if (t instanceof IllegalStateException && String.valueOf(t.getMessage()).contains("state should be: open")) {
            return new ShardException(ShardException.Kind.CLOSED, shard, "client closed", t);
        }
        return new ShardException(ShardException.Kind.UNAVAILABLE, shard, what, t);
    }

    /**
     * What the servers of a shard's deployment last failed with, if the monitor sees none of them
     * (every server unknown after an error); {@code null} if it sees one, or has not looked yet.
     */
    static Throwable downCause(ClusterDescription d) {
        Throwable first = null;
        for (ServerDescription s : d.getServerDescriptions()) {
            if (s.getType() != ServerType.UNKNOWN || s.getException() == null) {
                return null;
            }
            if (first == null) {
                first = s.getException();
            }
        }
        return first;
    }

    /**
     * A {@code ping} on {@code client}'s server ({@code MongoLoopClient.connect}): selects the server
     * and leaves an open connection in the client's pool.
     *
     * @return completed when the server answered, exceptionally with the failure mapped as a call's
     */
    static java.util.concurrent.CompletableFuture<Void> ping(com.mongodb.reactivestreams.client.MongoClient client,
            int shard, String address) {
        java.util.concurrent.CompletableFuture<Void> done = new java.util.concurrent.CompletableFuture<>();
        try {
            client.getDatabase("admin").runCommand(new org.bson.Document(MongoLoopClient.PING, 1))
                    .subscribe(new org.reactivestreams.Subscriber<org.bson.Document>() {
                        @Override
                        public void onSubscribe(org.reactivestreams.Subscription s) {
                            s.request(1);
                        }

                        @Override
                        public void onNext(org.bson.Document d) {
                            // the answer itself says nothing more
                        }

                        @Override
                        public void onError(Throwable t) {
                            done.completeExceptionally(map(t, shard, address,
                                    downCause(client.getClusterDescription()), false));
                        }

                        @Override
                        public void onComplete() {
                            done.complete(null);
                        }
                    });
        } catch (RuntimeException e) {
            done.completeExceptionally(map(e, shard, address, null, false));
        }
        return done;
    }

    /**
     * The failure of a call to a shard its monitor saw failing with {@code cause}, failed at once:
     * TIMEOUT if the server stopped answering (a read or connect timed out: it may be stopped or
     * overloaded, the same as a slow call), else UNAVAILABLE (refused, reset, unknown host).
     */
    static ShardException down(int shard, String address, Throwable cause) {
        boolean timedOut = false;
        for (Throwable c = cause; c != null && !timedOut; c = c.getCause()) {
            timedOut = c instanceof MongoTimeoutException || c instanceof MongoSocketReadTimeoutException
                    || c instanceof java.net.SocketTimeoutException || c instanceof java.nio.channels.InterruptedByTimeoutException
                    || c instanceof io.netty.channel.ConnectTimeoutException
                    || c instanceof io.netty.handler.timeout.ReadTimeoutException;
        }
        return new ShardException(timedOut ? ShardException.Kind.TIMEOUT : ShardException.Kind.UNAVAILABLE, shard,
                address + (timedOut ? " is not answering (" : " is down (") + cause.getMessage()
                        + "); retrying after the next heartbeat");
    }
}
