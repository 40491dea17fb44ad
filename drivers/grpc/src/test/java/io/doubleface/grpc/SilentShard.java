package io.doubleface.grpc;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A shard that accepts connections, reads everything and never answers — not even the HTTP/2
 * preface — like a leaf stopped with SIGSTOP whose kernel still completes handshakes.
 */
final class SilentShard implements AutoCloseable {

    private final ServerSocket server;
    private final List<Socket> accepted = new CopyOnWriteArrayList<>();
    private final Thread acceptor;

    SilentShard() throws IOException {
        server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        acceptor = Thread.ofPlatform().daemon().name("silent-shard").start(this::acceptLoop);
    }

    private void acceptLoop() {
        while (!server.isClosed()) {
            try {
                Socket s = server.accept();
                accepted.add(s);
                Thread.ofPlatform().daemon().name("silent-shard-conn").start(() -> drain(s));
            } catch (IOException e) {
                return;
            }
        }
    }

    private static void drain(Socket s) {
        byte[] buf = new byte[8192];
        try (InputStream in = s.getInputStream()) {
            while (in.read(buf) >= 0) {
                // discard
            }
        } catch (IOException e) {
            // closed
        }
    }

    InetSocketAddress address() {
        return new InetSocketAddress(InetAddress.getLoopbackAddress(), server.getLocalPort());
    }

    int accepted() {
        return accepted.size();
    }

    @Override
    public void close() throws IOException {
        server.close();
        try {
            acceptor.join(5_000); // a connection accepted while closing is in the list once it stops
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        for (Socket s : accepted) {
            s.close();
        }
    }
}
