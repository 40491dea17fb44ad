package io.doubleface.kv;

import io.doubleface.driver.spi.PipelinedConnection;
import io.doubleface.driver.spi.PipelinedProtocol;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;

/**
 * The client side of {@link KvProtocol} for the shared pipelined loop client: a request frame per
 * call, replies decoded by {@link KvClientHandler} and delivered as retained slices of the
 * received bytes (no copy). Stateless; one instance serves every loop.
 */
enum KvClientProtocol implements PipelinedProtocol<KvRequest> {
    INSTANCE;

    /** Initial bytes of a connection's buffer of unwritten calls: room for {@value} requests. */
    private static final int OUT_INITIAL_REQUESTS = 16;

    @Override
    public boolean idempotent(KvRequest command) {
        return true; // every KV request is a read
    }

    @Override
    public String protocolName() {
        return "kv";
    }

    @Override
    public int initialOutputBytes() {
        return KvProtocol.REQUEST_FRAME_LENGTH * OUT_INITIAL_REQUESTS;
    }

    @Override
    public String refuse(KvRequest request) {
        return KvProtocol.isEncodable(request) ? null
                : "field " + request.field() + " cannot be encoded (expected: -1.." + (Records.FIELD_COUNT - 1) + ")";
    }

    @Override
    public void encode(int id, int shard, KvRequest request, ByteBuf out) {
        KvProtocol.writeRequest(id, request, out);
    }

    @Override
    public void initChannel(Channel channel, PipelinedConnection connection) {
        channel.pipeline().addLast(new KvClientHandler(connection));
    }
}
