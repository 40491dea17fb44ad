package io.doubleface.kv;

import io.doubleface.driver.spi.BlockingClient;
import io.doubleface.driver.ShardException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.TimeUnit;

/**
 * The blocking KV client: plain blocking {@link Socket}s, one call per connection at a time — the
 * I/O the thread-per-request and Type-1 models are about.
 *
 * <p>Connections: each shard has a lock-free pool (deque) of idle connections. A call borrows one
 * (or connects a new one, {@code TCP_NODELAY}), writes its request, blocks reading the reply with
 * {@link Socket#setSoTimeout} set from the time left, and returns the connection to the pool. A
 * connection that failed or timed out is closed, never returned, and empties its shard's pool
 * (the shard probably restarted, so its other idle connections are stale too). Because every KV
 * operation is a read, {@link #call} retries once, on a new connection, when a pooled connection
 * turns out dead before any byte of the reply arrived.
 *
 * <p>Replies are pooled heap {@link ByteBuf}s the caller releases.
 *
 * <p>Threading: thread-safe; any number of threads call at once, each on connections no other
 * thread uses meanwhile. {@link #close} may be called from any thread; it also closes borrowed
 * connections, so threads blocked in a call return at once with {@code CLOSED}.
 */
final class KvBlockingClient implements BlockingClient<KvRequest> {

    /** A blocking connection; used by one thread at a time. */
    private static final class Conn {
        final Socket socket;
        final InputStream in;
        final OutputStream out;
        /** Whether the connection served a call before (so a failure on it may be retried). */
        boolean reused;
        final byte[] scratch = new byte[KvProtocol.REQUEST_FRAME_LENGTH];
        int nextId;
        int expectedId;
        /** Whether any byte of the current reply has been read (after that, no retry). */
        boolean started;

        Conn(Socket socket) throws IOException {
            this.socket = socket;
            this.in = socket.getInputStream();
            this.out = socket.getOutputStream();
        }
    }

    /** Read timeout once the deadline has passed (see {@link #setTimeout}): {@value} ms. */
    static final int LATE_READ_MILLIS = 1;

    private final KvDriver driver;
    private final InetSocketAddress[] addresses;
    private final ConcurrentLinkedDeque<Conn>[] idle;
    private final Set<Conn> open = ConcurrentHashMap.newKeySet();
    private final int connectTimeoutMillis;
    private final ByteBufAllocator alloc = ByteBufAllocator.DEFAULT;
    private volatile boolean closed;

    @SuppressWarnings("unchecked")
    KvBlockingClient(KvDriver driver) {
        this.driver = driver;
        int n = driver.shardCount();
        this.addresses = driver.shards().toArray(new InetSocketAddress[0]);
        this.idle = (ConcurrentLinkedDeque<Conn>[]) new ConcurrentLinkedDeque<?>[n];
        for (int i = 0; i < n; i++) {
            idle[i] = new ConcurrentLinkedDeque<>();
        }
        this.connectTimeoutMillis = (int) driver.options().connectTimeout().toMillis();
    }

    @Override
    public ByteBuf call(int shard, KvRequest request, long timeoutNanos) throws ShardException {
        check(shard, request, timeoutNanos);
        long deadline = System.nanoTime() + timeoutNanos;
        for (int attempt = 0; ; attempt++) {
            Conn c = borrow(shard, deadline);
            try {
                write(shard, c, request);
                ByteBuf reply = read(shard, c, deadline);
                giveBack(shard, c);
                return reply;
            } catch (ShardException e) {
                if (e.kind() == ShardException.Kind.SHARD_ERROR) {
                    giveBack(shard, c);
                    throw e;
                }
                boolean retry = attempt == 0 && c.reused && !c.started
                        && e.kind() == ShardException.Kind.UNAVAILABLE && !closed;
                discard(shard, c);
                if (!retry) {
                    throw e;
                }
            }
        }
    }

    @Override
    public void callAll(int[] shards, java.util.List<KvRequest> requests, long timeoutNanos, Sink sink) {
        if (shards.length != requests.size()) {
            throw new IllegalArgumentException("shards: " + shards.length + " entries, requests: " + requests.size()
                    + " (expected: the same)");
        }
        for (int i = 0; i < shards.length; i++) {
            check(shards[i], requests.get(i), timeoutNanos);
        }
        long deadline = System.nanoTime() + timeoutNanos;
        int n = shards.length;
        Conn[] conns = new Conn[n];
        int waiting = 0;
        // Phase 1: every request on the wire, so the shards work in parallel.
        for (int i = 0; i < n; i++) {
            try {
                Conn c = borrow(shards[i], deadline);
                conns[i] = c;
                write(shards[i], c, requests.get(i));
                waiting++;
            } catch (ShardException e) {
                if (conns[i] != null) {
                    discard(shards[i], conns[i]);
                    conns[i] = null;
                }
                sink.onFailure(i, e);
            }
        }
        // Phase 2: replies. Read first whichever connection already has bytes waiting (roughly
        // completion order); when none has, block on the first one left.
        while (waiting > 0) {
            int next = -1;
            for (int i = 0; i < n && next < 0; i++) {
                if (conns[i] != null && available(conns[i]) > 0) {
                    next = i;
                }
            }
            if (next < 0) {
                for (int i = 0; i < n && next < 0; i++) {
                    if (conns[i] != null) {
                        next = i;
                    }
                }
            }
            Conn c = conns[next];
            conns[next] = null;
            waiting--;
            ByteBuf reply;
            try {
                reply = read(shards[next], c, deadline);
            } catch (ShardException e) {
                if (e.kind() == ShardException.Kind.SHARD_ERROR) {
                    giveBack(shards[next], c);
                } else {
                    discard(shards[next], c);
                }
                sink.onFailure(next, e);
                continue;
            }
            giveBack(shards[next], c);
            sink.onReply(next, reply);
        }
    }

    private static int available(Conn c) {
        try {
            return c.in.available();
        } catch (IOException e) {
            return 1; // let the read report it
        }
    }

    /** Connects to every shard that has no idle connection and pools the new connections for the next calls. */
    @Override
    public void connect() throws ShardException {
        for (int shard = 0; shard < addresses.length; shard++) {
            if (idle[shard].isEmpty()) {
                giveBack(shard, borrow(shard, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(connectTimeoutMillis)));
            }
        }
    }

    private void check(int shard, KvRequest request, long timeoutNanos) {
        Objects.checkIndex(shard, addresses.length);
        Objects.requireNonNull(request, "request");
        if (timeoutNanos <= 0) {
            throw new IllegalArgumentException("timeoutNanos: " + timeoutNanos + " (expected: > 0)");
        }
    }

    private Conn borrow(int shard, long deadline) throws ShardException {
        if (closed) {
            throw new ShardException(ShardException.Kind.CLOSED, shard, "client closed");
        }
        Conn c = idle[shard].pollFirst();
        if (c != null) {
            c.started = false;
            return c;
        }
        long left = deadline - System.nanoTime();
        if (left <= 0) {
            throw new ShardException(ShardException.Kind.TIMEOUT, shard, "no time left to connect to " + addresses[shard]);
        }
        int timeout = (int) Math.max(1, Math.min(connectTimeoutMillis, TimeUnit.NANOSECONDS.toMillis(left)));
        Socket s = new Socket();
        try {
            s.setTcpNoDelay(true);
            InetSocketAddress a = addresses[shard];
            s.connect(a.isUnresolved() ? new InetSocketAddress(a.getHostString(), a.getPort()) : a, timeout);
            Conn conn = new Conn(s);
            open.add(conn);
            if (closed) { // lost a race with close()
                closeQuietly(conn);
                throw new ShardException(ShardException.Kind.CLOSED, shard, "client closed");
            }
            return conn;
        } catch (IOException e) {
            try {
                s.close();
            } catch (IOException ignored) {
                // nothing to do
            }
            throw new ShardException(ShardException.Kind.UNAVAILABLE, shard,
                    "cannot connect to " + addresses[shard] + ": " + e, e);
        }
    }

    private void write(int shard, Conn c, KvRequest request) throws ShardException {
        if (!KvProtocol.isEncodable(request)) {
            throw new ShardException(ShardException.Kind.SHARD_ERROR, shard, "field " + request.field()
                    + " cannot be encoded (expected: -1.." + (io.doubleface.kv.Records.FIELD_COUNT - 1) + ")");
        }
        int id = c.nextId++;
        c.expectedId = id;
        c.started = false;
        KvProtocol.writeRequest(id, request, c.scratch);
        try {
            c.out.write(c.scratch);
        } catch (IOException e) {
            throw failure(shard, c, e);
        }
    }

    private ByteBuf read(int shard, Conn c, long deadline) throws ShardException {
        byte[] h = c.scratch;
        int header = KvProtocol.LENGTH_FIELD_LENGTH + KvProtocol.RESPONSE_HEADER_LENGTH;
        ByteBuf payload = null;
        try {
            readFully(c, h, header, deadline);
            long length = KvProtocol.getInt(h, 0) & 0xFFFF_FFFFL;
            int id = KvProtocol.getInt(h, 4);
            int status = h[8] & 0xFF;
            if (length < KvProtocol.RESPONSE_HEADER_LENGTH || length > KvProtocol.MAX_RESPONSE_LENGTH) {
                throw new IOException("malformed response: length " + length);
            }
            if (id != c.expectedId) {
                throw new IOException("malformed response: id " + id + " (expected: " + c.expectedId + ")");
            }
            int n = (int) length - KvProtocol.RESPONSE_HEADER_LENGTH;
            payload = alloc.heapBuffer(n, n);
            while (payload.writableBytes() > 0) {
                setTimeout(c, deadline);
                if (payload.writeBytes(c.in, payload.writableBytes()) < 0) {
                    throw new EOFException("connection closed by " + c.socket.getRemoteSocketAddress());
                }
            }
            if (status == KvProtocol.STATUS_OK) {
                ByteBuf reply = payload;
                payload = null;
                return reply;
            }
            String message = payload.toString(StandardCharsets.UTF_8);
            throw new ShardException(ShardException.Kind.SHARD_ERROR, shard, KvProtocol.statusName(status) + ": " + message);
        } catch (IOException e) {
            throw failure(shard, c, e);
        } finally {
            if (payload != null) {
                payload.release();
            }
        }
    }

    private static void readFully(Conn c, byte[] dst, int len, long deadline) throws IOException {
        int off = 0;
        while (off < len) {
            setTimeout(c, deadline);
            int r = c.in.read(dst, off, len - off);
            if (r < 0) {
                throw new EOFException("connection closed by " + c.socket.getRemoteSocketAddress());
            }
            off += r;
            c.started = true;
        }
    }

    /**
     * Sets the read timeout to the time left. Past the deadline it is {@value #LATE_READ_MILLIS} ms
     * rather than a failure, so a reply already received (while {@link #callAll} waited on a slower
     * shard) is still delivered, while one not yet there fails at once.
     */
    private static void setTimeout(Conn c, long deadline) throws IOException {
        long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
        c.socket.setSoTimeout((int) Math.max(LATE_READ_MILLIS, Math.min(Integer.MAX_VALUE, left)));
    }

    private ShardException failure(int shard, Conn c, IOException e) {
        if (closed) {
            return new ShardException(ShardException.Kind.CLOSED, shard, "client closed", e);
        }
        if (e instanceof SocketTimeoutException) {
            return new ShardException(ShardException.Kind.TIMEOUT, shard, "no reply from "
                    + c.socket.getRemoteSocketAddress() + " in time", e);
        }
        return new ShardException(ShardException.Kind.UNAVAILABLE, shard, "connection to "
                + c.socket.getRemoteSocketAddress() + " failed: " + e, e);
    }

    /** Idle pooled connections to {@code shard} (for tests). */
    int idleConnections(int shard) {
        return idle[shard].size();
    }

    private void giveBack(int shard, Conn c) {
        c.reused = true;
        idle[shard].offerFirst(c); // LIFO: the warmest connection next
        if (closed && idle[shard].remove(c)) {
            closeQuietly(c);
        }
    }

    /** Closes {@code c} and the shard's idle connections, which are likely stale as well. */
    private void discard(int shard, Conn c) {
        closeQuietly(c);
        for (Conn stale; (stale = idle[shard].pollFirst()) != null; ) {
            closeQuietly(stale);
        }
    }

    private void closeQuietly(Conn c) {
        open.remove(c);
        try {
            c.socket.close();
        } catch (IOException ignored) {
            // nothing to do
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (ConcurrentLinkedDeque<Conn> d : idle) {
            for (Conn c; (c = d.pollFirst()) != null; ) {
                closeQuietly(c);
            }
        }
        for (Conn c : open) {
            closeQuietly(c); // unblocks threads reading from it
        }
        driver.clients.forget(this);
    }

    @Override
    public String toString() {
        return "KvBlockingClient[" + driver.describe() + "]";
    }
}
