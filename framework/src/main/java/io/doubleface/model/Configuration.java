package io.doubleface.model;

import java.util.Locale;
import java.util.Objects;

/**
 * A threading configuration: a {@link Kind model} plus its axes (block/poll, pool sizes,
 * scheduling policy), written as a short name such as {@code doubleface}, {@code doubleface-poll},
 * {@code thread-64}, {@code type1-32}, {@code type2a-1f2b} or {@code type2b-fixed-8}.
 *
 * <h2>Grammar</h2>
 *
 * <pre>
 *   name    := model ( "-" option )*
 *   model   := thread | type1 | type2a | type2b | doubleface
 *   option  := N          pool size: request threads (thread), workers (type1, type2b fixed),
 *                         loops (doubleface)
 *            | NfMb       N frontend loops, M backend loops (type2a), M reactors (type2b)
 *            | Nf | Mb    only frontend loops, only backend loops/reactors
 *            | virtual    a virtual thread per request (thread)
 *            | fixed | cached     worker pool kind (type2b; default cached)
 *            | poll | block       busy-poll or block in epoll_wait (loop models)
 *            | fifo | cf | cfa    reply scheduling policy (doubleface; default: the server's)
 * </pre>
 *
 * <h2>μTune's taxonomy</h2>
 *
 * The eight threading models of μTune (OSDI'18) — synchronous/asynchronous × in-line/dispatch ×
 * block/poll — are names of their own that map onto the models above (docs/models.md has the
 * table):
 *
 * <pre>
 *   taxo    := style ( "-" size )*
 *   style   := sib | sip | sdb | sdp | aib | aip | adb | adp
 *   size    := Nn         network threads (in-line threads for si*, ai*): the first N I/O loops
 *            | Nw         worker threads (sd*: request threads; ad*: dispatch workers)
 *            | Nr         response threads (ai*, ad*: the backend loops)
 *            | N          the style's main pool: n for si*, w for sd* and ad*, r for ai*
 * </pre>
 *
 * {@code sib/sip} = {@code thread} in-line (the I/O loop itself plans, calls the shards with
 * blocking I/O and merges); {@code sdb/sdp} = {@code thread} with N frontends and W request
 * threads; {@code aib/aip} = {@code type2a} with N frontends and R backends; {@code adb/adp} =
 * {@code type2a} whose plan is dispatched to W workers. A taxonomy name stays its own canonical
 * name (e.g. {@code sdb-1n-64w}), so switch logs and profiles read like the paper.
 *
 * <p>Frontend loops are the first N of the server's I/O loops ({@code --io-threads}); a
 * configuration asking for more than the server has is rejected when it is activated.
 * Immutable; {@link #name()} is canonical (parsing it again gives an equal configuration).
 *
 * @param kind the threading model
 * @param frontends frontend (upstream) loops; 0 = all of the server's I/O loops
 * @param backends backend loops (type2a) or reactors (type2b); 0 = model default
 * @param workers pool size: request threads, Type-1 workers or Type-2b fixed workers; 0 = default
 * @param virtualThreads thread-per-request on virtual threads
 * @param fixedPool Type-2b: a fixed worker pool instead of the on-demand cached one
 * @param busyPoll the configuration's loops busy-poll instead of blocking
 * @param policy DoubleFace reply scheduling policy, or {@code null} for the server's default
 * @param inline thread model: the I/O loop runs the whole request itself (μTune's in-line
 *     models; the loop blocks in the shard calls)
 * @param style the μTune taxonomy name this configuration was written as, or {@code null}
 */
public record Configuration(
        Kind kind, int frontends, int backends, int workers, boolean virtualThreads, boolean fixedPool,
        boolean busyPoll, String policy, boolean inline, Style style) {

    /** Model-form constructor (no in-line execution, no taxonomy name). */
    public Configuration(Kind kind, int frontends, int backends, int workers, boolean virtualThreads,
            boolean fixedPool, boolean busyPoll, String policy) {
        this(kind, frontends, backends, workers, virtualThreads, fixedPool, busyPoll, policy, false, null);
    }

    /** Default network threads of the dispatch styles (sdb, sdp, adb, adp): {@value}. */
    public static final int DEFAULT_NETWORK_THREADS = 1;
    /** Default dispatch workers of adb/adp: {@value}. */
    public static final int DEFAULT_ASYNC_WORKERS = 4;
    /** Default response threads of adb/adp: {@value}. */
    public static final int DEFAULT_ASYNC_RESPONSE_THREADS = 4;
    /** Default response threads of aib/aip: {@value}. */
    public static final int DEFAULT_INLINE_RESPONSE_THREADS = 1;

    /** μTune's threading models: synchronous/asynchronous × in-line/dispatch × block/poll. */
    public enum Style {
        SIB(false, false, false), SIP(false, false, true), SDB(false, true, false), SDP(false, true, true),
        AIB(true, false, false), AIP(true, false, true), ADB(true, true, false), ADP(true, true, true);

        private final boolean async;
        private final boolean dispatch;
        private final boolean poll;

        Style(boolean async, boolean dispatch, boolean poll) {
            this.async = async;
            this.dispatch = dispatch;
            this.poll = poll;
        }

        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }

        public boolean async() {
            return async;
        }

        public boolean dispatch() {
            return dispatch;
        }

        public boolean poll() {
            return poll;
        }

        /** The size letter a bare number stands for: n (si*), w (sd*, ad*), r (ai*). */
        char mainPool() {
            return !dispatch ? (async ? 'r' : 'n') : 'w';
        }
    }

    /** Default request threads of {@code thread}: {@value}. */
    public static final int DEFAULT_REQUEST_THREADS = 64;
    /** Default workers of {@code type1}: {@value}. */
    public static final int DEFAULT_TYPE1_WORKERS = 32;
    /** Default fixed workers of {@code type2b-fixed}: {@value}. */
    public static final int DEFAULT_TYPE2B_WORKERS = 8;
    /** Largest pool or loop count accepted: {@value}. */
    public static final int MAX_THREADS = 4096;

    /** The threading models. */
    public enum Kind {
        THREAD("thread"),
        TYPE1("type1"),
        TYPE2A("type2a"),
        TYPE2B("type2b"),
        DOUBLEFACE("doubleface");

        private final String label;

        Kind(String label) {
            this.label = label;
        }

        public String label() {
            return label;
        }
    }

    public Configuration {
        Objects.requireNonNull(kind, "kind");
        check("frontends", frontends);
        check("backends", backends);
        check("workers", workers);
        if (inline && kind != Kind.THREAD) {
            throw new IllegalArgumentException("inline: only the thread model runs requests in-line");
        }
    }

    private static void check(String what, int n) {
        if (n < 0 || n > MAX_THREADS) {
            throw new IllegalArgumentException(what + ": " + n + " (expected: 0.." + MAX_THREADS + ")");
        }
    }

    /**
     * Parses a configuration name.
     *
     * @throws IllegalArgumentException with the offending part and what was expected
     */
    public static Configuration parse(String name) {
        if (name == null || name.isBlank()) {
            throw new IllegalArgumentException("configuration: empty (expected e.g. doubleface, thread-64, type2a-1f2b)");
        }
        String[] parts = name.strip().toLowerCase(Locale.ROOT).split("-");
        for (Style st : Style.values()) {
            if (st.label().equals(parts[0])) {
                return parseStyle(name, st, parts);
            }
        }
        Kind kind = null;
        for (Kind k : Kind.values()) {
            if (k.label.equals(parts[0])) {
                kind = k;
            }
        }
        if (kind == null) {
            throw new IllegalArgumentException("configuration '" + name + "': unknown model '" + parts[0]
                    + "' (expected: thread, type1, type2a, type2b, doubleface, or one of μTune's sib, sip, sdb, sdp,"
                    + " aib, aip, adb, adp)");
        }
        int frontends = 0;
        int backends = 0;
        int workers = 0;
        boolean virtual = false;
        boolean fixed = false;
        boolean cached = false;
        boolean poll = false;
        String policy = null;
        for (int i = 1; i < parts.length; i++) {
            String p = parts[i];
            try {
                if (p.matches("\\d+")) {
                    if (kind == Kind.TYPE2A) {
                        throw bad(name, p, "type2a takes NfMb, e.g. type2a-1f2b");
                    }
                    if (kind == Kind.DOUBLEFACE) {
                        frontends = positive(p);
                    } else {
                        workers = positive(p);
                        if (kind == Kind.TYPE2B) {
                            fixed = true;
                        }
                    }
                } else if (p.matches("\\d+w")) {
                    if (kind != Kind.TYPE2A) {
                        throw bad(name, p, "Nw (dispatch workers) applies to type2a");
                    }
                    workers = positive(p.substring(0, p.length() - 1));
                } else if (p.matches("\\d+f\\d+b")) {
                    if (kind != Kind.TYPE2A && kind != Kind.TYPE2B) {
                        throw bad(name, p, "NfMb applies to type2a and type2b");
                    }
                    frontends = positive(p.substring(0, p.indexOf('f')));
                    backends = positive(p.substring(p.indexOf('f') + 1, p.length() - 1));
                } else if (p.matches("\\d+b")) {
                    if (kind != Kind.TYPE2A && kind != Kind.TYPE2B) {
                        throw bad(name, p, "Mb applies to type2a and type2b");
                    }
                    backends = positive(p.substring(0, p.length() - 1));
                } else if (p.matches("\\d+f")) {
                    if (kind == Kind.DOUBLEFACE) {
                        throw bad(name, p, "doubleface takes a plain loop count, e.g. doubleface-2");
                    }
                    frontends = positive(p.substring(0, p.length() - 1));
                } else if (p.equals("virtual")) {
                    if (kind != Kind.THREAD) {
                        throw bad(name, p, "virtual applies to thread");
                    }
                    virtual = true;
                } else if (p.equals("fixed") || p.equals("cached")) {
                    if (kind != Kind.TYPE2B) {
                        throw bad(name, p, "fixed/cached apply to type2b");
                    }
                    fixed = p.equals("fixed");
                    cached = !fixed;
                } else if (p.equals("poll") || p.equals("block")) {
                    poll = p.equals("poll");
                } else if (p.equals("fifo") || p.equals("cf") || p.equals("cfa")) {
                    if (kind != Kind.DOUBLEFACE) {
                        throw bad(name, p, "scheduling policies apply to doubleface");
                    }
                    policy = switch (p) {
                        case "cf" -> "completion-first";
                        case "cfa" -> "completion-first-arrival";
                        default -> "fifo";
                    };
                } else {
                    throw bad(name, p, "N, NfMb, Nf, Mb, Nw, virtual, fixed, cached, poll, block, fifo, cf or cfa");
                }
            } catch (NumberFormatException e) {
                throw bad(name, p, "a number up to " + MAX_THREADS);
            }
        }
        if (virtual && workers != 0) {
            throw new IllegalArgumentException("configuration '" + name + "': thread-virtual takes no pool size");
        }
        if (cached && (fixed || workers != 0)) {
            // a size sets fixed too, so without this check type2b-cached-8 would silently be fixed
            throw new IllegalArgumentException("configuration '" + name
                    + "': a cached pool takes no size and cannot be fixed (use type2b-fixed-N or type2b-cached)");
        }
        if (kind == Kind.TYPE2B && fixed && workers == 0) {
            workers = DEFAULT_TYPE2B_WORKERS;
        }
        if (kind == Kind.TYPE2B && !fixed && workers != 0) {
            throw new IllegalArgumentException("configuration '" + name + "': a cached pool takes no size (use type2b-fixed-N)");
        }
        if (kind == Kind.THREAD && !virtual && workers == 0) {
            workers = DEFAULT_REQUEST_THREADS;
        }
        if (kind == Kind.TYPE1 && workers == 0) {
            workers = DEFAULT_TYPE1_WORKERS;
        }
        return new Configuration(kind, frontends, backends, workers, virtual, fixed, poll, policy, false, null);
    }

    private static Configuration parseStyle(String name, Style style, String[] parts) {
        int n = -1;
        int w = -1;
        int r = -1;
        for (int i = 1; i < parts.length; i++) {
            String p = parts[i];
            if (!p.matches("\\d+[nwr]?")) {
                throw bad(name, p, "Nn, Nw, Nr or N (pool sizes: network, worker, response threads)");
            }
            char which = Character.isDigit(p.charAt(p.length() - 1)) ? style.mainPool() : p.charAt(p.length() - 1);
            int v;
            try {
                v = positive(Character.isDigit(p.charAt(p.length() - 1)) ? p : p.substring(0, p.length() - 1));
            } catch (NumberFormatException e) {
                throw bad(name, p, "a number from 1 to " + MAX_THREADS);
            }
            int previous = switch (which) {
                case 'n' -> n;
                case 'w' -> w;
                default -> r;
            };
            if (previous != -1) {
                throw bad(name, p, "each pool size once");
            }
            switch (which) {
                case 'n' -> n = v;
                case 'w' -> w = v;
                default -> r = v;
            }
        }
        if (w != -1 && !style.dispatch()) {
            throw new IllegalArgumentException("configuration '" + name + "': " + style.label()
                    + " is in-line and has no worker pool (drop the Nw size; dispatch styles are sd*, ad*)");
        }
        if (r != -1 && !style.async()) {
            throw new IllegalArgumentException("configuration '" + name + "': " + style.label()
                    + " is synchronous and has no response threads (drop the Nr size; asynchronous styles are a*)");
        }
        // in-line styles default to every I/O loop as an in-line thread (n = 0 = all)
        int network = n != -1 ? n : style.dispatch() ? DEFAULT_NETWORK_THREADS : 0;
        if (!style.async()) {
            int workers = style.dispatch() ? (w != -1 ? w : DEFAULT_REQUEST_THREADS) : 0;
            return new Configuration(Kind.THREAD, network, 0, workers, false, false, style.poll(), null,
                    !style.dispatch(), style);
        }
        int response = r != -1 ? r : style.dispatch() ? DEFAULT_ASYNC_RESPONSE_THREADS : DEFAULT_INLINE_RESPONSE_THREADS;
        int workers = style.dispatch() ? (w != -1 ? w : DEFAULT_ASYNC_WORKERS) : 0;
        return new Configuration(Kind.TYPE2A, network, response, workers, false, false, style.poll(), null, false, style);
    }

    private static int positive(String s) {
        int n = Integer.parseInt(s);
        if (n < 1 || n > MAX_THREADS) {
            throw new NumberFormatException();
        }
        return n;
    }

    private static IllegalArgumentException bad(String name, String part, String expected) {
        return new IllegalArgumentException("configuration '" + name + "': bad option '" + part + "' (expected: " + expected + ")");
    }

    /**
     * The canonical name, e.g. {@code type2a-1f2b}, {@code thread-64}, {@code doubleface-poll}, or
     * the taxonomy form ({@code sdb-1n-64w}) if it was written as one.
     */
    public String name() {
        if (style != null) {
            StringBuilder b = new StringBuilder(style.label());
            if (frontends != 0) {
                b.append('-').append(frontends).append('n');
            }
            if (style.dispatch()) {
                b.append('-').append(workers).append('w');
            }
            if (style.async()) {
                b.append('-').append(backends).append('r');
            }
            return b.toString();
        }
        StringBuilder b = new StringBuilder(kind.label);
        if ((kind == Kind.THREAD || kind == Kind.TYPE1) && frontends != 0) {
            b.append('-').append(frontends).append('f');
        }
        switch (kind) {
            case THREAD -> b.append(virtualThreads ? "-virtual" : "-" + workers);
            case TYPE1 -> b.append('-').append(workers);
            case TYPE2A, TYPE2B -> {
                if (frontends != 0 && backends != 0) {
                    b.append('-').append(frontends).append('f').append(backends).append('b');
                } else if (frontends != 0) {
                    b.append('-').append(frontends).append('f');
                } else if (backends != 0) {
                    b.append('-').append(backends).append('b');
                }
                if (kind == Kind.TYPE2B && fixedPool) {
                    b.append("-fixed-").append(workers);
                }
                if (kind == Kind.TYPE2A && workers != 0) {
                    b.append('-').append(workers).append('w');
                }
            }
            case DOUBLEFACE -> {
                if (frontends != 0) {
                    b.append('-').append(frontends);
                }
            }
        }
        if (busyPoll) {
            b.append("-poll");
        }
        if (policy != null) {
            b.append(switch (policy) {
                case "fifo" -> "-fifo";
                case "completion-first-arrival" -> "-cfa";
                default -> "-cf";
            });
        }
        return b.toString();
    }

    /**
     * The configuration's family: its name without pool sizes ({@code sdb}, {@code thread},
     * {@code type2a-poll}). The FM baseline policy varies only the sizes within one family.
     */
    public String family() {
        if (style != null) {
            return style.label();
        }
        StringBuilder b = new StringBuilder();
        for (String part : name().split("-")) {
            if (part.matches("\\d+[fbw]?|\\d+f\\d+b")) {
                continue;
            }
            if (b.length() > 0) {
                b.append('-');
            }
            b.append(part);
        }
        return b.toString();
    }

    @Override
    public String toString() {
        return name();
    }
}
