package io.doubleface.mongo;

import io.netty.handler.ssl.JdkSslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.net.ssl.SSLServerSocket;

/**
 * A loopback TLS terminator in front of a plaintext shard (mongo-java-server speaks no TLS): a
 * client's TLS connection is decrypted here and relayed to the shard, so the driver's own TLS
 * code runs against a real handshake with a certificate made in the test. One thread per
 * direction per connection, all closed by {@link #close}.
 */
final class TlsProxy implements AutoCloseable {

    private final ServerSocket server;
    private final InetSocketAddress target;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private volatile boolean closed;

    TlsProxy(InetSocketAddress target, File certPem, File keyPem) throws IOException {
        this.target = target;
        JdkSslContext ctx = (JdkSslContext) SslContextBuilder.forServer(certPem, keyPem).sslProvider(SslProvider.JDK)
                .build();
        SSLServerSocket s = (SSLServerSocket) ctx.context().getServerSocketFactory()
                .createServerSocket(0, 64, InetAddress.getLoopbackAddress());
        this.server = s;
        Thread.ofPlatform().daemon().name("tls-proxy-accept").start(this::acceptLoop);
    }

    int port() {
        return server.getLocalPort();
    }

    private void acceptLoop() {
        while (!closed) {
            try {
                Socket in = server.accept();
                Socket out = new Socket();
                out.connect(target, 5_000);
                sockets.add(in);
                sockets.add(out);
                pump(in, out);
                pump(out, in);
            } catch (IOException e) {
                // a failed handshake or a closed server socket: go on until closed
            }
        }
    }

    private void pump(Socket from, Socket to) {
        Thread.ofPlatform().daemon().name("tls-proxy-pump").start(() -> {
            byte[] buf = new byte[16384];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buf)) >= 0) {
                    out.write(buf, 0, n);
                    out.flush();
                }
            } catch (IOException e) {
                // either side closed
            } finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        });
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // closing
        }
    }

    @Override
    public void close() throws IOException {
        closed = true;
        server.close();
        for (Socket s : sockets) {
            closeQuietly(s);
        }
    }
}
