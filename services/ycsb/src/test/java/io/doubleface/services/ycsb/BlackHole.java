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

    @Override
    public void close() throws Exception {
        server.close();
        acceptor.join(10_000); // a connection accepted while closing is in the list once it stops
        for (Socket s : accepted) {
            s.close();
        }
    }
}
