package io.doubleface.services.ycsb;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * One raw HTTP/1.1 client connection: the test writes exact bytes and reads responses one by one
 * (status line, headers, {@code Content-Length} body). Reads give up after
 * {@link TestCluster#GENEROUS} so a server that never answers fails the test instead of hanging it.
 */
final class RawHttp implements AutoCloseable {

    /** One parsed response. */
    record Response(int status, String reason, Map<String, String> headers, byte[] body) {
        String text() {
            return new String(body, StandardCharsets.UTF_8);
        }

        /** A header value (name case-insensitive), or null. */
        String header(String name) {
            return headers.get(name.toLowerCase(Locale.ROOT));
        }

        @Override
        public String toString() {
            String t = text();
            return status + " " + reason + " " + headers + " " + (t.length() > 200 ? t.substring(0, 200) + "…" : t);
        }
    }

    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;

    RawHttp(int port) throws IOException {
        socket = new Socket();
        socket.setTcpNoDelay(true);
        socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
        socket.setSoTimeout((int) TestCluster.GENEROUS.toMillis());
        in = new BufferedInputStream(socket.getInputStream(), 65536);
        out = socket.getOutputStream();
    }

    /** A keep-alive {@code GET} request. */
    static String get(String pathAndQuery) {
        return "GET " + pathAndQuery + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    }

    /** A {@code GET} request that asks the server to close the connection after answering. */
    static String getAndClose(String pathAndQuery) {
        return "GET " + pathAndQuery + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    }

    RawHttp write(String ascii) throws IOException {
        return write(ascii.getBytes(StandardCharsets.ISO_8859_1));
    }

    RawHttp write(byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
        return this;
    }

    /** Whether response bytes are waiting to be read. */
    boolean hasInput() throws IOException {
        return in.available() > 0;
    }

    /** Writes {@code request} and reads its response. */
    Response exchange(String request) throws IOException {
        write(request);
        Response r = read();
        if (r == null) {
            throw new AssertionError("connection closed without a response to " + firstLine(request));
        }
        return r;
    }

    /** Reads the next response; {@code null} if the server closed the connection before it began. */
    Response read() throws IOException {
        String status = line(true);
        if (status == null) {
            return null;
        }
        String[] parts = status.split(" ", 3);
        if (parts.length < 2 || !parts[0].startsWith("HTTP/1.")) {
            throw new AssertionError("not an HTTP status line: " + status);
        }
        int code = Integer.parseInt(parts[1]);
        Map<String, String> headers = new LinkedHashMap<>();
        for (String h = line(false); !h.isEmpty(); h = line(false)) {
            int colon = h.indexOf(':');
            if (colon <= 0) {
                throw new AssertionError("malformed header line: " + h);
            }
            String name = h.substring(0, colon).trim().toLowerCase(Locale.ROOT);
            if (headers.put(name, h.substring(colon + 1).trim()) != null) {
                throw new AssertionError("header " + name + " given twice");
            }
        }
        String length = headers.get("content-length");
        if (length == null) {
            throw new AssertionError("response without Content-Length: " + status + " " + headers);
        }
        int n = Integer.parseInt(length);
        byte[] body = in.readNBytes(n);
        if (body.length != n) {
            throw new AssertionError("connection closed after " + body.length + " of " + n + " body bytes");
        }
        return new Response(code, parts.length > 2 ? parts[2] : "", headers, body);
    }

    /**
     * Whether the server closed the connection: the next read ends the stream (a reset counts as
     * closed too). Fails if the server neither sends nor closes within the guard.
     */
    boolean closedByServer() throws IOException {
        try {
            int b = in.read();
            if (b >= 0) {
                throw new AssertionError("expected the server to close the connection, got byte " + b);
            }
            return true;
        } catch (SocketTimeoutException e) {
            return false;
        } catch (java.net.SocketException e) { // connection reset
            return true;
        }
    }

    private String line(boolean eofAllowed) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream(128);
        while (true) {
            int c = in.read();
            if (c < 0) {
                if (eofAllowed && b.size() == 0) {
                    return null;
                }
                throw new AssertionError("connection closed in the middle of a response head: " + b);
            }
            if (c == '\n') {
                byte[] l = b.toByteArray();
                int len = l.length > 0 && l[l.length - 1] == '\r' ? l.length - 1 : l.length;
                return new String(l, 0, len, StandardCharsets.ISO_8859_1);
            }
            b.write(c);
            eofAllowed = false;
        }
    }

    private static String firstLine(String request) {
        int i = request.indexOf('\r');
        return i < 0 ? request : request.substring(0, Math.min(i, 120));
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
