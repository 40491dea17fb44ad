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
 * stopping an in-process server. It also counts the connections it accepted and can stop
 * accepting new ones while the accepted ones go on ({@link #stopAccepting()}): a test then knows
 * that a call made after that went over a connection made before. Bounded: one thread per
 * direction per connection, all closed by {@link #close}.
 */
public final class StallingProxy implements AutoCloseable {

    private final ServerSocket server;
    private final InetSocketAddress target;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final List<Thread> threads = new CopyOnWriteArrayList<>();
    private final Object lock = new Object();
    private int accepted; // under lock
    private volatile boolean stalled;
    private volatile boolean closed;

    public StallingProxy(InetSocketAddress target) throws IOException {
        this(0, target);
    }

    /**
     * @param port the port to listen on (0: any)
     * @param target the shard
     */
    public StallingProxy(int port, InetSocketAddress target) throws IOException {
        this.target = target;
        this.server = new ServerSocket();
        server.setReuseAddress(true);
        server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 128);
        threads.add(Thread.ofPlatform().daemon().name("proxy-accept").start(this::acceptLoop));
    }

    /**
     * A port below the kernel's ephemeral range (32768+) where nothing listens now: a dead shard,
     * which a test may later bring up there (a client's own source port never takes it meanwhile).
     */
    public static int closedLowPort() throws IOException {
        java.util.Random random = new java.util.Random();
        for (int attempt = 0; ; attempt++) {
            int port = 20000 + random.nextInt(12000);
            try (ServerSocket s = new ServerSocket()) {
                s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
                return port;
            } catch (java.net.BindException e) {
                if (attempt == 100) {
                    throw e;
                }
            }
        }
    }

    /** {@return the connections accepted so far} */
    public int accepted() {
        synchronized (lock) {
            return accepted;
        }
    }

    /**
     * Waits until at least {@code n} connections were accepted (a client's connect completes
     * before the proxy's accept returns).
     *
     * @return the connections accepted
     */
    public int awaitAccepted(int n, java.time.Duration timeout) throws InterruptedException {
        long end = System.nanoTime() + timeout.toNanos();
        synchronized (lock) {
            while (accepted < n) {
                long left = end - System.nanoTime();
                if (left <= 0) {
                    break;
                }
                java.util.concurrent.TimeUnit.NANOSECONDS.timedWait(lock, left);
            }
            return accepted;
        }
    }

    /** Closes the listening socket: new connections are refused, accepted ones go on. */
    public void stopAccepting() throws IOException {
        server.close();
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
                synchronized (lock) {
                    accepted++;
                    lock.notifyAll();
                }
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
