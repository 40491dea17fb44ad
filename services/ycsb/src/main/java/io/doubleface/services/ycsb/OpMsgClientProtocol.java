package io.doubleface.services.ycsb;

import io.doubleface.driver.spi.PipelinedConnection;
import io.doubleface.driver.spi.PipelinedProtocol;
import io.doubleface.kv.KvRequest;
import io.doubleface.kv.Records;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import java.util.List;
import org.bson.RawBsonDocument;

/**
 * The OP_MSG side of {@link OpMsgDriver}'s loop clients, on the framework's shared pipelined loop
 * client ({@link io.doubleface.driver.spi.PipelinedLoopClient}): a record read is one {@code find}
 * ({@link OpMsgProtocol#writeFind}), its call id the message's {@code requestId}; the reply's
 * {@code responseTo} names the call ({@link OpMsgClientHandler}), and its documents become the
 * canonical record reply ({@link MongoLayout#writeReply}). A server answers the messages of one
 * connection in order; the id match does not rely on it.
 *
 * <p>Immutable; one instance serves the clients of every loop of a driver.
 */
final class OpMsgClientProtocol implements PipelinedProtocol<KvRequest> {

    /** Initial bytes of a connection's buffer of unwritten calls: {@value}. */
    private static final int OUT_INITIAL_BYTES = 4096;

    private final long records;
    private final String database;

    /**
     * @param records records per shard: SCANs wrap at it
     * @param database the database holding the records collection
     */
    OpMsgClientProtocol(long records, String database) {
        this.records = records;
        this.database = database;
    }

    @Override
    public String protocolName() {
        return "mongodb";
    }

    @Override
    public int initialOutputBytes() {
        return OUT_INITIAL_BYTES;
    }

    @Override
    public void encode(int id, int shard, KvRequest request, ByteBuf out) {
        OpMsgProtocol.writeFind(id, request, records, database, out);
    }

    @Override
    public void initChannel(Channel channel, PipelinedConnection connection) {
        channel.pipeline().addLast(new OpMsgClientHandler(connection));
    }

    /** The found documents ({@code List<RawBsonDocument>}) as the canonical reply of the read. */
    @Override
    public Object reply(KvRequest request, int shard, Object decoded, ByteBufAllocator alloc) {
        @SuppressWarnings("unchecked")
        List<RawBsonDocument> documents = (List<RawBsonDocument>) decoded;
        ByteBuf out = alloc.buffer(Records.replySize(request));
        String bad;
        try {
            bad = MongoLayout.writeReply(request, records, documents, out);
        } catch (RuntimeException e) {
            out.release();
            throw e;
        }
        if (bad != null) {
            out.release();
            throw new IllegalStateException(bad);
        }
        return out;
    }
}
