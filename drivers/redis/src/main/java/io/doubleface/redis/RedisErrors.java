package io.doubleface.redis;

import io.doubleface.driver.ShardException;
import io.doubleface.driver.ShardException.Kind;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisConnectionException;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * Maps Lettuce's exceptions onto {@link ShardException.Kind}s.
 *
 * <table>
 *   <caption>Lettuce outcome → kind</caption>
 *   <tr><td>{@link RedisCommandTimeoutException}, also as the cause of a
 *       {@link RedisConnectionException} (connected, but no answer to the handshake)</td>
 *       <td>{@code TIMEOUT} (→ 504)</td></tr>
 *   <tr><td>"Request queue size exceeded" / "Command buffer size exceeded" (the
 *       {@code requestQueueSize} bound)</td><td>{@code OVERLOADED}</td></tr>
 *   <tr><td>{@link RedisCommandExecutionException} (an error reply), a missing or malformed
 *       record</td><td>{@code SHARD_ERROR}</td></tr>
 *   <tr><td>"Connection closed" after our own close</td><td>{@code CLOSED}</td></tr>
 *   <tr><td>everything else: not connected (REJECT while disconnected), connection lost, connect
 *       refused or timed out</td><td>{@code UNAVAILABLE}</td></tr>
 * </table>
 */
final class RedisErrors {

    private RedisErrors() {}

    private static boolean causedBy(Throwable t, Class<? extends Throwable> type) {
        for (Throwable c = t.getCause(); c != null && c != t; t = c, c = c.getCause()) {
            if (type.isInstance(c)) {
                return true;
            }
        }
        return false;
    }

    static ShardException map(Throwable t, int shard, boolean closedByUs) {
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        if (t instanceof ShardException se) {
            return se;
        }
        if (t instanceof RedisCommandTimeoutException
                || (t instanceof RedisConnectionException && causedBy(t, RedisCommandTimeoutException.class))) {
            // the second: the TCP connect succeeded but the shard did not answer the handshake
            return new ShardException(Kind.TIMEOUT, shard, t.getMessage(), t);
        }
        if (t instanceof RedisCommandExecutionException) {
            return new ShardException(Kind.SHARD_ERROR, shard, "redis error: " + t.getMessage(), t);
        }
        if (closedByUs) {
            return new ShardException(Kind.CLOSED, shard, "client closed", t);
        }
        if (t instanceof CancellationException) {
            return new ShardException(Kind.UNAVAILABLE, shard, "command cancelled", t);
        }
        String m = String.valueOf(t.getMessage());
        if (m.contains("queue size exceeded") || m.contains("buffer size exceeded")) {
            return new ShardException(Kind.OVERLOADED, shard, m, t);
        }
        Throwable root = t;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return new ShardException(Kind.UNAVAILABLE, shard, t.getClass().getSimpleName() + ": " + m
                + (root == t ? "" : " (" + root.getClass().getSimpleName() + ": " + root.getMessage() + ")"), t);
    }
}
