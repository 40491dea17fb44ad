package io.doubleface.server.internal;

import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http.DefaultHttpHeadersFactory;
import io.netty.handler.codec.http.DefaultHttpObject;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpHeadersFactory;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.AsciiString;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The request heads most clients send, read in one pass: a {@code GET}, {@code HEAD} or
 * {@code DELETE} without a body, whole in the bytes already read. {@link StrictRequestDecoder}
 * tries it first at the start of every request and hands anything else to Netty's decoder.
 *
 * <p><b>A strict subset of what Netty's decoder accepts, with the same result.</b> A head is taken
 * here only if every byte fits the narrow grammar below; then Netty's {@code HttpRequestDecoder}
 * would decode the same bytes into the same method, target, version and header list, and hand on
 * an empty last content (no {@code Content-Length}, no {@code Transfer-Encoding}: no body, RFC 9112
 * §6.3). Everything else — a head split across reads, bare line feeds, obs-fold, obs-text, a
 * separator other than one space, any other method, a framing header, a head over the size limits
 * — is left untouched (the method returns {@code null}) and Netty's decoder reads it, with its
 * errors. {@code SimpleRequestHeadTest} checks the equivalence on random and mutated heads at
 * every read boundary, and a fuzz target does so in CI.
 *
 * <pre>
 * head     = method SP target SP ("HTTP/1.1" / "HTTP/1.0") CRLF *(field CRLF) CRLF
 * method   = "GET" / "HEAD" / "DELETE"
 * target   = 1*%x21-7E
 * field    = 1*tchar ":" *(SP / HTAB) *(%x20-7E / HTAB)     ; trailing SP / HTAB trimmed
 * </pre>
 *
 * <p>Why: Netty's decoder copies each line into a scratch buffer with checked writes, splits it,
 * and validates every header again as it is added; on the mid-tier's hot path that was 8.6 % of
 * the samples at fanout 5 (docs/benchmarks.md). Here the head is copied once into an array (one
 * bounds check) and parsed from it; its header fields — already checked against the grammar — are
 * kept as bytes and added to Netty's headers without a second validation, and only if something asks
 * for them ({@link Request}). Not thread-safe: {@link StrictRequestDecoder} keeps one per thread
 * (a parse is synchronous, and {@link #consumed()} is read right after it).
 */
final class SimpleRequestHead {

    /** More fields than this: Netty's decoder reads the head. */
    private static final int MAX_FIELDS = 32;
    private static final HttpHeadersFactory CHECKED_HERE = DefaultHttpHeadersFactory.headersFactory()
            .withValidation(false);
    /** RFC 9110 §5.6.2 tchar. */
    private static final boolean[] TCHAR = new boolean[256];

    static {
        for (int c = '0'; c <= '9'; c++) {
            TCHAR[c] = true;
        }
        for (int c = 'a'; c <= 'z'; c++) {
            TCHAR[c] = true;
            TCHAR[c - 'a' + 'A'] = true;
        }
        for (char c : "!#$%&'*+-.^_`|~".toCharArray()) {
            TCHAR[c] = true;
        }
    }

    private final int maxInitialLineLength;
    private final int maxHeaderSize;
    /** The most bytes a head within both limits can take: each field line is at least 2 bytes, so its CRLF at most doubles it. */
    private final int maxHeadBytes;
    private final byte[] scratch = new byte[256];
    private int consumed;

    SimpleRequestHead(int maxInitialLineLength, int maxHeaderSize) {
        this.maxInitialLineLength = maxInitialLineLength;
        this.maxHeaderSize = maxHeaderSize;
        this.maxHeadBytes = (int) Math.min(Integer.MAX_VALUE - 16, maxInitialLineLength + 2L + 2L * maxHeaderSize + 2L);
    }

    /** Whether this parser was made for these limits. */
    boolean hasLimits(int maxInitialLineLength, int maxHeaderSize) {
        return this.maxInitialLineLength == maxInitialLineLength && this.maxHeaderSize == maxHeaderSize;
    }

    /** How many bytes the head returned by the last successful {@link #parse} took. */
    int consumed() {
        return consumed;
    }

    /**
     * The request whose head starts at {@code in}'s reader index, or {@code null} if it is not a
     * simple head wholly in {@code in} (then nothing is decided: Netty's decoder reads it). Does not
     * move the reader index; {@link #consumed()} says how far to.
     */
    HttpRequest parse(ByteBuf in) {
        int readable = Math.min(in.readableBytes(), maxHeadBytes);
        byte[] a = scratch;
        int n = Math.min(readable, a.length);
        in.getBytes(in.readerIndex(), a, 0, n);
        while (true) {
            HttpRequest r = parse(a, n);
            if (r != null || n == readable || consumed != INCOMPLETE) {
                return r;
            }
            // The head goes on past what was copied: copy more into a larger array, kept for this
            // head only (rare: heads are usually < 256 bytes; an idle connection keeps 256).
            int more = (int) Math.min(readable, 2L * a.length);
            byte[] bigger = new byte[more];
            System.arraycopy(a, 0, bigger, 0, n);
            in.getBytes(in.readerIndex() + n, bigger, n, more - n);
            a = bigger;
            n = more;
        }
    }

    /** {@link #consumed} after a {@code null} from {@link #parse(byte[], int)}: more bytes could make it a simple head. */
    private static final int INCOMPLETE = -1;
    /** {@link #consumed} after a {@code null}: not a simple head, whatever follows. */
    private static final int NOT_SIMPLE = -2;

    private HttpRequest incomplete() {
        consumed = INCOMPLETE;
        return null;
    }

    private HttpRequest notSimple() {
        consumed = NOT_SIMPLE;
        return null;
    }

    private HttpRequest parse(byte[] a, int n) {
        HttpMethod method;
        int p;
        if (n < 4) {
            return incomplete();
        }
        if (a[0] == 'G' && a[1] == 'E' && a[2] == 'T' && a[3] == ' ') {
            method = HttpMethod.GET;
            p = 4;
        } else if (a[0] == 'H' && a[1] == 'E' && a[2] == 'A' && a[3] == 'D') {
            method = HttpMethod.HEAD;
            p = 5;
        } else if (a[0] == 'D' && a[1] == 'E' && a[2] == 'L' && a[3] == 'E') {
            method = HttpMethod.DELETE;
            p = 7;
        } else {
            return notSimple();
        }
        if (p > 4) { // the rest of HEAD / DELETE, and its space
            if (n < p) {
                return incomplete();
            }
            if (method == HttpMethod.HEAD ? a[4] != ' '
                    : a[4] != 'T' || a[5] != 'E' || a[6] != ' ') {
                return notSimple();
            }
        }
        int targetStart = p;
        while (p < n && a[p] >= 0x21 && a[p] <= 0x7E) { // bytes are signed: obs-text is negative
            p++;
        }
        if (p == n) {
            return p - targetStart > maxInitialLineLength ? notSimple() : incomplete();
        }
        if (p == targetStart || a[p] != ' ') {
            return notSimple();
        }
        int targetEnd = p++;
        if (n - p < 10) {
            return incomplete();
        }
        if (a[p] != 'H' || a[p + 1] != 'T' || a[p + 2] != 'T' || a[p + 3] != 'P' || a[p + 4] != '/'
                || a[p + 5] != '1' || a[p + 6] != '.' || (a[p + 7] != '1' && a[p + 7] != '0')
                || a[p + 8] != '\r' || a[p + 9] != '\n') {
            return notSimple();
        }
        HttpVersion version = a[p + 7] == '1' ? HttpVersion.HTTP_1_1 : HttpVersion.HTTP_1_0;
        if (p + 8 > maxInitialLineLength) {
            return notSimple();
        }
        p += 10;
        int fieldsStart = p;
        // the fields are checked and counted here, and kept as bytes (Request): nothing is allocated
        // for a head that turns out not to be simple
        int fields = 0;
        int hosts = 0;
        boolean connection = false;
        int headerSize = 0;
        while (true) {
            if (n - p < 2) {
                return incomplete();
            }
            if (a[p] == '\r') {
                if (a[p + 1] != '\n') {
                    return notSimple();
                }
                p += 2;
                break;
            }
            int nameStart = p;
            while (p < n && TCHAR[a[p] & 0xFF]) {
                p++;
            }
            if (p == n) {
                return incomplete();
            }
            if (p == nameStart || a[p] != ':') {
                return notSimple();
            }
            int nameEnd = p++;
            while (p < n && (a[p] == ' ' || a[p] == '\t')) {
                p++;
            }
            int valueStart = p;
            int valueEnd = p;
            while (p < n) {
                byte b = a[p];
                if (b == '\r') {
                    break;
                }
                if ((b < 0x20 && b != '\t') || b == 0x7F || b < 0) {
                    return notSimple();
                }
                p++;
                if (b != ' ' && b != '\t') {
                    valueEnd = p;
                }
            }
            headerSize += p - nameStart;
            if (headerSize > maxHeaderSize) {
                return notSimple();
            }
            if (n - p < 2) {
                return incomplete();
            }
            if (a[p + 1] != '\n') {
                return notSimple();
            }
            if (framing(a, nameStart, nameEnd - nameStart)) {
                return notSimple(); // a body, or a framing question: Netty's decoder decides
            }
            if (fields == MAX_FIELDS) {
                return notSimple();
            }
            int nameLength = nameEnd - nameStart;
            if (nameLength == 4 && equalsIgnoreCase(a, nameStart, "host")) {
                hosts++;
            } else if (nameLength == 10 && equalsIgnoreCase(a, nameStart, "connection")) {
                connection = true;
            }
            fields++;
            p += 2;
        }
        consumed = p;
        String target = new String(a, targetStart, targetEnd - targetStart, StandardCharsets.ISO_8859_1);
        byte[] fieldLines = fields == 0 ? NO_FIELDS : Arrays.copyOfRange(a, fieldsStart, p - 2);
        return new Request(method, target, version, fieldLines, hosts, connection);
    }

    private static final byte[] NO_FIELDS = new byte[0];

    /** {@code headers().getAll(HOST).size()}, without building a simple head's headers. */
    static int hostCount(HttpRequest r) {
        return r instanceof Request simple ? simple.hostCount() : r.headers().getAll(HttpHeaderNames.HOST).size();
    }

    /** {@link HttpUtil#isKeepAlive}, without building a simple head's headers when it has no {@code Connection} field. */
    static boolean isKeepAlive(HttpRequest r) {
        return r instanceof Request simple ? simple.keepAlive() : HttpUtil.isKeepAlive(r);
    }

    /**
     * {@link HttpUtil#getContentLength(io.netty.handler.codec.http.HttpMessage, long)} with -1 for
     * none: -1 for a simple head without building its headers (its grammar has no framing field).
     */
    static long contentLength(HttpRequest r) {
        return r instanceof Request ? -1L : HttpUtil.getContentLength(r, -1L);
    }

    /**
     * A simple head's request. Its header fields are kept as the bytes they came in (one array)
     * and become Netty's {@link HttpHeaders} only when something asks for them: the mid-tier's
     * own checks — one {@code Host}, keep-alive — are answered from what the parse counted, so a
     * request whose service never reads a header allocates no header map (it was a tenth of the
     * heap a fanout-1 request allocates; docs/tracing.md, GC).
     */
    static final class Request extends DefaultHttpObject implements HttpRequest {
        private HttpMethod method;
        private String uri;
        private HttpVersion version;
        /** The head's field lines, each with its CRLF; null once {@link #headers} is built. */
        private byte[] fieldLines;
        private HttpHeaders headers;
        private final int hosts;
        private final boolean connection;

        Request(HttpMethod method, String uri, HttpVersion version, byte[] fieldLines, int hosts, boolean connection) {
            this.method = method;
            this.uri = uri;
            this.version = version;
            this.fieldLines = fieldLines;
            this.hosts = hosts;
            this.connection = connection;
        }

        /** How many {@code Host} fields the head has (as {@code headers().getAll(HOST).size()}, without building them). */
        int hostCount() {
            return hosts;
        }

        /** {@link HttpUtil#isKeepAlive}; without building the headers when the head has no {@code Connection} field. */
        boolean keepAlive() {
            return connection ? HttpUtil.isKeepAlive(this) : version.isKeepAliveDefault();
        }

        @Override
        public HttpHeaders headers() {
            HttpHeaders h = headers;
            if (h == null) {
                h = headers = parseFields(fieldLines);
                fieldLines = null;
            }
            return h;
        }

        @Override
        public HttpMethod method() {
            return method;
        }

        @Override
        @Deprecated
        public HttpMethod getMethod() {
            return method;
        }

        @Override
        public HttpRequest setMethod(HttpMethod method) {
            this.method = java.util.Objects.requireNonNull(method, "method");
            return this;
        }

        @Override
        public String uri() {
            return uri;
        }

        @Override
        @Deprecated
        public String getUri() {
            return uri;
        }

        @Override
        public HttpRequest setUri(String uri) {
            this.uri = java.util.Objects.requireNonNull(uri, "uri");
            return this;
        }

        @Override
        public HttpVersion protocolVersion() {
            return version;
        }

        @Override
        @Deprecated
        public HttpVersion getProtocolVersion() {
            return version;
        }

        @Override
        public HttpRequest setProtocolVersion(HttpVersion version) {
            this.version = java.util.Objects.requireNonNull(version, "version");
            return this;
        }

        @Override
        public String toString() {
            StringBuilder b = new StringBuilder("SimpleRequestHead.Request(decodeResult: ").append(decoderResult())
                    .append(")\n").append(method).append(' ').append(uri).append(' ').append(version);
            for (java.util.Map.Entry<String, String> e : headers()) {
                b.append('\n').append(e.getKey()).append(": ").append(e.getValue());
            }
            return b.toString();
        }
    }

    /**
     * The headers of field lines already checked against the grammar above: name, {@code ':'},
     * optional whitespace, the value with trailing whitespace trimmed; lines separated by CRLF.
     */
    private static HttpHeaders parseFields(byte[] a) {
        HttpHeaders headers = CHECKED_HERE.newHeaders();
        int p = 0;
        while (p < a.length) {
            int ns = p;
            while (a[p] != ':') {
                p++;
            }
            int ne = p++;
            while (p < a.length && (a[p] == ' ' || a[p] == '\t')) {
                p++;
            }
            int vs = p;
            int ve = p;
            while (p < a.length && a[p] != '\r') {
                if (a[p] != ' ' && a[p] != '\t') {
                    ve = p + 1;
                }
                p++;
            }
            headers.add(name(a, ns, ne - ns), ve == vs ? "" : new String(a, vs, ve - vs, StandardCharsets.ISO_8859_1));
            p += 2; // CRLF
        }
        return headers;
    }

    /** The header names a request's framing depends on (RFC 9112 §6; Netty's WebSocket hixie-76 length). */
    private static boolean framing(byte[] a, int start, int len) {
        return switch (len) {
            case 14 -> equalsIgnoreCase(a, start, "content-length");
            case 17 -> equalsIgnoreCase(a, start, "transfer-encoding");
            case 18 -> equalsIgnoreCase(a, start, "sec-websocket-key1") || equalsIgnoreCase(a, start, "sec-websocket-key2");
            default -> false;
        };
    }

    /** {@code lower} is lower case ASCII; {@code a} holds token characters only. */
    private static boolean equalsIgnoreCase(byte[] a, int start, String lower) {
        for (int i = 0; i < lower.length(); i++) {
            if ((a[start + i] | 0x20) != lower.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    /** The common names as Netty's constants (no copy), the others copied, case kept (as Netty's decoder does). */
    private static AsciiString name(byte[] a, int start, int len) {
        if (len == 4 && a[start] == 'H' && a[start + 1] == 'o' && a[start + 2] == 's' && a[start + 3] == 't') {
            return HOST;
        }
        if (len == 10 && a[start] == 'C' && regionEquals(a, start, "Connection")) {
            return CONNECTION;
        }
        return new AsciiString(a, start, len, true);
    }

    private static boolean regionEquals(byte[] a, int start, String s) {
        for (int i = 0; i < s.length(); i++) {
            if (a[start + i] != s.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    private static final AsciiString HOST = AsciiString.cached("Host");
    private static final AsciiString CONNECTION = AsciiString.cached("Connection");
}
