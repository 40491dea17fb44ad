package io.doubleface.services.ycsb;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** A shard that accepts connections, reads nothing and never answers. */
final class BlackHole implements AutoCloseable {
    private final ServerSocket server;
    private final List<Socket> accepted = new CopyOnWriteArrayList<>();
    private final Thread acceptor;

    BlackHole() throws IOException {
        server = new ServerSocket(0, 128, InetAddress.getLoopbackAddress());
        acceptor = Thread.ofPlatform().daemon().name("black-hole").start(() -> {
            try {
                while (true) {
                    accepted.add(server.accept());
                }
            } catch (IOException closed) {
                // closed: stop accepting
            }
        });
    }

    InetSocketAddress address() {
        return new InetSocketAddress("127.0.0.1", server.getLocalPort());
    }

    int accepted() {
        return accepted.size();
    }

    /**
     * {@return the bytes that arrived on the accepted connections, unread: whether a call reached the
     * shard (a connection alone does not say so: the server connects at start, before any call)}
     */
    int received() {
        int n = 0;
        for (Socket s : accepted) {
            try {
                n += s.getInputStream().available();
            } catch (IOException closed) {
                // nothing more will arrive on it
            }
        }
        return n;
    }

    @Override
    public void close() throws Exception {
        server.close();
        acceptor.join(10_000); // a connection accepted while closing is in the list once it stops
        for (Socket s : accepted) {
            s.close();
        }
    }
}
