package io.doubleface.kv;

import io.doubleface.internal.loop.Threads;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BiConsumer;

/** Test helpers: expected replies and fake shards. */
final class TestShards {

    private TestShards() {}

    /** What {@link Records#writeReply} produces for {@code request}. */
    static byte[] expected(KvRequest request, long records) {
        ByteBuf b = Unpooled.buffer(Records.replySize(request));
        try {
            Records.writeReply(request, records, b);
            return ByteBufUtil.getBytes(b);
        } finally {
            b.release();
        }
    }

    /**
     * A fake shard on a blocking {@link ServerSocket}: accepts connections and hands each to
     * {@code behaviour} on its own thread. The default behaviour reads and never answers.
     */
    static final class FakeShard implements AutoCloseable {
        private final ServerSocket server;
        private final List<Socket> accepted = new CopyOnWriteArrayList<>();
        private final BiConsumer<Socket, InputStream> behaviour;
        private final Thread acceptor;

        FakeShard(int port, BiConsumer<Socket, InputStream> behaviour) throws IOException {
            this.server = new ServerSocket();
            server.setReuseAddress(true);
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
            this.behaviour = behaviour;
            this.acceptor = Threads.platform("fake-acc").newThread(this::acceptLoop);
            acceptor.start();
        }

        /**
         * A silent shard on a free port below the kernel's ephemeral range (32768+), for tests that
         * close the shard and expect its port to stay closed: an ephemeral port could meanwhile be
         * taken by another process's server or by a client's own source port.
         */
        static FakeShard silentOnLowPort() throws IOException {
            java.util.Random random = new java.util.Random();
            for (int attempt = 0; ; attempt++) {
                int port = 20000 + random.nextInt(12000);
                try {
                    return new FakeShard(port, (s, in) -> drain(in));
                } catch (java.net.BindException e) {
                    if (attempt == 100) {
                        throw e;
                    }
                }
            }
        }

        /** A shard that accepts and reads, but never answers. */
        static FakeShard silent() throws IOException {
            return new FakeShard(0, (s, in) -> drain(in));
        }

        private void acceptLoop() {
            while (!server.isClosed()) {
                try {
                    Socket s = server.accept();
                    accepted.add(s);
                    InputStream in = s.getInputStream();
                    Threads.platform("fake-con").newThread(() -> behaviour.accept(s, in)).start();
                } catch (IOException e) {
                    return; // closed
                }
            }
        }

        static void drain(InputStream in) {
            byte[] b = new byte[4096];
            try {
                while (in.read(b) >= 0) {
                    // discard
                }
            } catch (IOException e) {
                // closed
            }
        }

        int port() {
            return server.getLocalPort();
        }

        InetSocketAddress address() {
            return new InetSocketAddress(InetAddress.getLoopbackAddress(), port());
        }

        /** Connections accepted so far. */
        List<Socket> accepted() {
            return accepted;
        }

        /** Closes the accepted connections, keeps listening. */
        void dropConnections() throws IOException {
            for (Socket s : accepted) {
                s.close();
            }
        }

        /**
         * Stops listening and closes every accepted connection. Waits for the accept thread to
         * leave {@code accept()}: until it does, the JDK keeps the listening socket open in the
         * kernel, so a client could still connect (and that connection would be accepted after
         * the drop and stay open and silent). After this returns, the port refuses connections.
         */
        @Override
        public void close() throws IOException {
            server.close();
            try {
                acceptor.join(10_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (acceptor.isAlive()) {
                throw new IOException("fake shard's accept thread did not stop within 10 s");
            }
            dropConnections();
        }
    }
}
