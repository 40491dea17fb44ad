package io.doubleface.mongo;

import com.mongodb.MongoClientException;
import com.mongodb.MongoException;
import com.mongodb.MongoOperationTimeoutException;
import com.mongodb.MongoServerException;
import com.mongodb.MongoSocketException;
import com.mongodb.MongoSocketReadTimeoutException;
import com.mongodb.MongoTimeoutException;
import io.doubleface.driver.ShardException;

/**
 * Maps MongoDB driver exceptions onto {@link ShardException.Kind}s.
 *
 * <table>
 *   <caption>mapping</caption>
 *   <tr><th>driver exception</th><th>kind</th></tr>
 *   <tr><td>{@link MongoOperationTimeoutException} (CSOT {@code timeoutMS}),
 *       {@link MongoSocketReadTimeoutException}</td><td>TIMEOUT, unless the shard is known to be down</td></tr>
 *   <tr><td>{@link MongoTimeoutException} (server selection, pool wait)</td><td>UNAVAILABLE if the shard
 *       is known to be down, else TIMEOUT</td></tr>
 *   <tr><td>{@link MongoSocketException} (open, read, write, closed)</td><td>UNAVAILABLE</td></tr>
 *   <tr><td>{@link MongoServerException} (command and query errors)</td><td>SHARD_ERROR</td></tr>
 *   <tr><td>{@code IllegalStateException} "state should be: open" (client closed)</td><td>CLOSED</td></tr>
 *   <tr><td>anything else</td><td>UNAVAILABLE</td></tr>
 * </table>
 */
final class MongoErrors {

    private MongoErrors() {}

    /**
     * @param shardDown whether the shard's server monitor last saw the server unreachable: a
     *     timeout is then the server's absence, not its slowness
     */
    static ShardException map(Throwable t, int shard, String address, boolean shardDown, boolean closed) {
        if (closed) {
            return new ShardException(ShardException.Kind.CLOSED, shard, "client closed", t);
        }
        String what = address + ": " + t.getMessage();
        if (t instanceof MongoTimeoutException || t instanceof MongoSocketReadTimeoutException) {
            return shardDown
                    ? new ShardException(ShardException.Kind.UNAVAILABLE, shard, address + " is down: " + t.getMessage(), t)
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
        if (t instanceof MongoClientException || t instanceof MongoException) {
            return new ShardException(ShardException.Kind.UNAVAILABLE, shard, what, t);
        }
        return new ShardException(ShardException.Kind.UNAVAILABLE, shard, what, t);
    }
}
