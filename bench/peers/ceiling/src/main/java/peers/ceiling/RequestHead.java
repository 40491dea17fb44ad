package peers.ceiling;

import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;

/**
 * A hand-written HTTP/1.x request-head parser for the ceiling: the request line and the headers up to the
 * empty line, in place in the read buffer, with no objects but the target string. Only what the workload
 * needs is accepted: {@code GET}, HTTP/1.0 or 1.1, no body ({@code Content-Length} other than 0 or any
 * {@code Transfer-Encoding} is a 400), a head of at most {@value #MAX_HEAD} bytes. {@code Connection}
 * decides keep-alive as RFC 9112 says (1.1: unless {@code close}; 1.0: only with {@code keep-alive}).
 * One instance per connection; the fields describe the last head parsed.
 */
final class RequestHead {

    static final int MAX_HEAD = 8192;
    /** {@link #parse} results besides the end of the head. */
    static final int INCOMPLETE = -1;
    static final int BAD = -2;

    String target;
    boolean keepAlive;
    boolean http10;
    private boolean bad;

    /**
     * Parses the head starting at {@code from}.
     *
     * @return the index just past the head's empty line, {@link #INCOMPLETE} or {@link #BAD}
     */
    int parse(ByteBuf b, int from, int to) {
        int lf = b.indexOf(from, Math.min(to, from + MAX_HEAD), (byte) '\n');
        if (lf < 0) {
            return to - from >= MAX_HEAD ? BAD : INCOMPLETE;
        }
        int lineEnd = lf > from && b.getByte(lf - 1) == '\r' ? lf - 1 : lf;
        // request line: GET SP target SP HTTP/1.x
        if (lineEnd - from < 14 || b.getByte(from) != 'G' || b.getByte(from + 1) != 'E' || b.getByte(from + 2) != 'T'
                || b.getByte(from + 3) != ' ') {
            return BAD;
        }
        int sp = b.indexOf(from + 4, lineEnd, (byte) ' ');
        if (sp < 0 || lineEnd - sp != 9 || !b.toString(sp + 1, 7, StandardCharsets.US_ASCII).equals("HTTP/1.")) {
            return BAD;
        }
        byte minor = b.getByte(lineEnd - 1);
        if (minor != '0' && minor != '1') {
            return BAD;
        }
        bad = false;
        http10 = minor == '0';
        keepAlive = !http10;
        target = b.toString(from + 4, sp - from - 4, StandardCharsets.US_ASCII);
        // headers, up to the empty line
        int limit = Math.min(to, from + MAX_HEAD);
        int line = lf + 1;
        while (true) {
            lf = b.indexOf(line, limit, (byte) '\n');
            if (lf < 0) {
                return to - from >= MAX_HEAD ? BAD : INCOMPLETE;
            }
            lineEnd = lf > line && b.getByte(lf - 1) == '\r' ? lf - 1 : lf;
            if (lineEnd == line) {
                return lf + 1;
            }
            header(b, line, lineEnd);
            if (bad) {
                return BAD;
            }
            line = lf + 1;
        }
    }

    private void header(ByteBuf b, int from, int to) {
        int colon = b.indexOf(from, to, (byte) ':');
        if (colon < 0) {
            bad = true; // malformed
            return;
        }
        int nameLength = colon - from;
        if (nameLength == 10 && is(b, from, "connection")) {
            String v = b.toString(colon + 1, to - colon - 1, StandardCharsets.US_ASCII).trim().toLowerCase();
            if (v.contains("close")) {
                keepAlive = false;
            } else if (v.contains("keep-alive")) {
                keepAlive = true;
            }
        } else if ((nameLength == 14 && is(b, from, "content-length")
                        && !b.toString(colon + 1, to - colon - 1, StandardCharsets.US_ASCII).trim().equals("0"))
                || (nameLength == 17 && is(b, from, "transfer-encoding"))) {
            bad = true; // a body: not this server's workload
        }
    }

    private static boolean is(ByteBuf b, int from, String lowerName) {
        for (int i = 0; i < lowerName.length(); i++) {
            if ((b.getByte(from + i) | 0x20) != lowerName.charAt(i)) {
                return false;
            }
        }
        return true;
    }
}
