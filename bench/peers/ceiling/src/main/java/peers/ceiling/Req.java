package peers.ceiling;

import io.netty.buffer.ByteBuf;

/** One request in flight: its parts (a retained slice per shard, in shard order) and what is left. */
final class Req {

    final HttpConn conn;
    final ByteBuf[] parts;
    final boolean keepAlive;
    final boolean http10;
    final int status;
    int remaining;
    boolean failed;

    Req(HttpConn conn, int fanout, boolean keepAlive, boolean http10, int status) {
        this.conn = conn;
        this.parts = new ByteBuf[fanout];
        this.keepAlive = keepAlive;
        this.http10 = http10;
        this.status = status;
        this.remaining = fanout;
    }

    void complete(int part, ByteBuf value) {
        if (value == null) {
            failed = true;
        }
        parts[part] = value;
        if (--remaining == 0) {
            conn.answerReady();
        }
    }

    void release() {
        for (ByteBuf b : parts) {
            if (b != null) {
                b.release();
            }
        }
    }
}
