package io.doubleface.server.internal;

/**
 * One query parameter read straight from the raw query string, without building the map of every
 * parameter that {@code QueryStringDecoder.parameters()} builds (a {@code HashMap}, a list and
 * strings per parameter, per request, which showed in the mid-tier's profiles, docs/benchmarks.md).
 * Only for raw queries that need no decoding: {@link #plain} says which; for the others
 * the caller uses the decoder, so both paths give the same answers.
 */
final class QueryScan {

    /** {@link #find}: the parameter is given more than once. */
    static final String REPEATED = new String("repeated");

    private QueryScan() {}

    /** Where a request target's path ends, as {@code QueryStringDecoder} finds it: its first {@code ?} or {@code #}, else its length. */
    static int pathEnd(String uri) {
        for (int i = 0, n = uri.length(); i < n; i++) {
            char c = uri.charAt(i);
            if (c == '?' || c == '#') {
                return i;
            }
        }
        return uri.length();
    }

    /**
     * The raw query of the target {@code uri} (as {@code QueryStringDecoder.rawQuery()}: what follows
     * the path's end) if it is {@link #plain}, else {@code null}. A path ended by {@code #} has no
     * plain query: the decoder's parameters stop at a {@code #}, its raw query would go on past it.
     */
    static String plainQuery(String uri, int pathEnd) {
        if (pathEnd >= uri.length()) {
            return "";
        }
        if (uri.charAt(pathEnd) == '#') {
            return null;
        }
        String raw = uri.substring(pathEnd + 1);
        return plain(raw) ? raw : null;
    }

    /** Whether {@code raw} can be scanned as it is: no escapes, no {@code +}, no {@code ;} or {@code #}. */
    static boolean plain(String raw) {
        for (int i = 0, n = raw.length(); i < n; i++) {
            char c = raw.charAt(i);
            if (c == '%' || c == '+' || c == ';' || c == '#') {
                return false;
            }
        }
        return true;
    }

    /**
     * The value of {@code name} in the {@link #plain} query {@code raw}: {@code null} if absent,
     * {@code ""} for {@code name} or {@code name=}, {@link #REPEATED} (compare by identity) if it is
     * given more than once.
     */
    static String find(String raw, String name) {
        long r = range(raw, name);
        if (r == ABSENT) {
            return null;
        }
        if (r == REPEATED_RANGE) {
            return REPEATED;
        }
        int from = (int) (r >>> 32);
        int to = (int) r;
        return from == to ? "" : raw.substring(from, to);
    }

    /** {@link #range}: the parameter is absent. */
    static final long ABSENT = -1L;
    /** {@link #range}: the parameter is given more than once. */
    static final long REPEATED_RANGE = -2L;

    /**
     * Where the value of {@code name} is in the {@link #plain} query {@code raw}, without a copy:
     * {@code (start << 32) | end} (an empty range for {@code name} or {@code name=}), {@link #ABSENT}
     * or {@link #REPEATED_RANGE}.
     */
    static long range(String raw, String name) {
        long r = next(raw, name, 0);
        return r == ABSENT || next(raw, name, (int) r + 1) == ABSENT ? r : REPEATED_RANGE;
    }

    /** How many times {@code name} is given in the {@link #plain} query {@code raw}. */
    static int count(String raw, String name) {
        int times = 0;
        for (long r = next(raw, name, 0); r != ABSENT; r = next(raw, name, (int) r + 1)) {
            times++;
        }
        return times;
    }

    /** The first segment at or after {@code i} that names {@code name}: its value's range as {@link #range} packs it, or {@link #ABSENT}. */
    private static long next(String raw, String name, int i) {
        int n = raw.length();
        int len = name.length();
        while (i <= n) {
            int amp = raw.indexOf('&', i);
            if (amp < 0) {
                amp = n;
            }
            int s = start(raw, i, amp);
            if (amp > s) {
                int eq = raw.indexOf('=', s);
                boolean hasEq = eq >= 0 && eq < amp;
                int nameEnd = hasEq ? eq : amp;
                if (nameEnd - s == len && raw.regionMatches(s, name, 0, len)) {
                    return ((long) (hasEq ? eq + 1 : amp) << 32) | amp;
                }
            }
            i = amp + 1;
        }
        return ABSENT;
    }

    /** Where the name of the segment {@code [i, amp)} starts: past any leading {@code =}, as Netty's decoder reads it. */
    private static int start(String raw, int i, int amp) {
        while (i < amp && raw.charAt(i) == '=') {
            i++;
        }
        return i;
    }
}
