package io.doubleface.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A loopback TCP proxy in front of a shard that can stop forwarding (both ways) while keeping
 * every connection open: a shard that stops answering, like a SIGSTOPped server, without
 * stopping an in-process server. Bounded: one thread per direction per connection, all closed
 * by {@link #close}.
 */
public final class StallingProxy implements AutoCloseable {

    private final ServerSocket server;
    private final InetSocketAddress target;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final List<Thread> threads = new CopyOnWriteArrayList<>();
    private volatile boolean stalled;
    private volatile boolean closed;

    public StallingProxy(InetSocketAddress target) throws IOException {
        this.target = target;
        this.server = new ServerSocket(0, 128, InetAddress.getLoopbackAddress());
        threads.add(Thread.ofPlatform().daemon().name("proxy-accept").start(this::acceptLoop));
    }

    public int port() {
        return server.getLocalPort();
    }

    public InetSocketAddress address() {
        return new InetSocketAddress("127.0.0.1", port());
    }

    /** Stops (true) or resumes (false) forwarding. */
    public void stall(boolean on) {
        stalled = on;
    }

    private void acceptLoop() {
        try {
            while (!closed) {
                Socket in = server.accept();
                Socket out = new Socket();
                try {
                    out.connect(target, 5_000);
                } catch (IOException e) {
                    in.close();
                    continue;
                }
                in.setTcpNoDelay(true);
                out.setTcpNoDelay(true);
                sockets.add(in);
                sockets.add(out);
                threads.add(Thread.ofPlatform().daemon().name("proxy-up").start(() -> pump(in, out)));
                threads.add(Thread.ofPlatform().daemon().name("proxy-down").start(() -> pump(out, in)));
            }
        } catch (IOException e) {
            // closed
        }
    }

    private void pump(Socket from, Socket to) {
        byte[] buf = new byte[16384];
        try (from; to) {
            InputStream in = from.getInputStream();
            OutputStream out = to.getOutputStream();
            while (!closed) {
                while (stalled && !closed) {
                    Thread.sleep(5);
                }
                int n = in.read(buf);
                if (n < 0) {
                    return;
                }
                while (stalled && !closed) { // stalled while reading: hold the bytes back
                    Thread.sleep(5);
                }
                out.write(buf, 0, n);
            }
        } catch (IOException | InterruptedException e) {
            // closed
        }
    }

    @Override
    public void close() throws Exception {
        closed = true;
        server.close();
        for (Socket s : sockets) {
            s.close();
        }
        for (Thread t : threads) {
            t.join(10_000);
        }
    }
}
