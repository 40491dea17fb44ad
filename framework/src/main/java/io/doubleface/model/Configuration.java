package io.doubleface.model;

import io.doubleface.sched.ReplyOrder;
import java.util.Locale;

/**
 * A threading configuration: one of the five models with that model's own axes (pool sizes,
 * block/poll, reply order). It is a sealed type with one record per model —
 * {@link ThreadPerRequest}, {@link Type1}, {@link Type2a}, {@link Type2b}, {@link DoubleFace} —
 * so a configuration built in code names exactly the fields its model has:
 *
 * <pre>{@code
 * Configuration c = new Configuration.Type2a(1, 2, 0, false, null);   // = parse("type2a-1f2b")
 * server.switchTo(c);
 * switch (c) {
 *     case Configuration.DoubleFace d -> ...;   // exhaustive: the compiler knows the five models
 *     ...
 * }
 * }</pre>
 *
 * Every configuration also has a short name such as {@code doubleface}, {@code doubleface-poll},
 * {@code thread-64}, {@code type1-32}, {@code type2a-1f2b} or {@code type2b-fixed-8}: the grammar
 * below is a parser ({@link #parse}) on top of the records, and {@link #name()} writes it back.
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
 *            | fifo | cf | cfa    reply order (doubleface; default: the server's)
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
 * <p>Why one file of this length: the five records, their names and the name grammar's parser
 * are one sealed type, so a switch over a configuration is checked for exhaustiveness and the
 * grammar, its printer and this documentation change together.
 */
public sealed interface Configuration
        permits Configuration.ThreadPerRequest, Configuration.Type1, Configuration.Type2a, Configuration.Type2b,
                Configuration.DoubleFace {

    /** {@return the threading model} */
    Kind kind();

    /**
     * {@return the frontend (upstream) loops: the first N of the server's I/O loops; 0 = all of them}
     * For {@link DoubleFace} these are its loops, which serve both sides.
     */
    int frontends();

    /** {@return whether the configuration's loops busy-poll instead of blocking in {@code epoll_wait}} */
    boolean busyPoll();

    /** {@return the μTune taxonomy name this configuration was written as, or {@code null}} */
    default Style style() {
        return null;
    }

    /**
     * The canonical name, e.g. {@code type2a-1f2b}, {@code thread-64}, {@code doubleface-poll}, or
     * the taxonomy form ({@code sdb-1n-64w}) if it was written as one. Parsing it gives an equal
     * configuration.
     *
     * @return the canonical name
     */
    String name();

    /**
     * The configuration's family: its name without pool sizes ({@code sdb}, {@code thread},
     * {@code type2a-poll}). The FM baseline policy varies only the sizes within one family.
     *
     * @return the family name
     */
    default String family() {
        if (style() != null) {
            return style().label();
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

    /** Default network threads of the dispatch styles (sdb, sdp, adb, adp): {@value}. */
    int DEFAULT_NETWORK_THREADS = 1;
    /** Default dispatch workers of adb/adp: {@value}. */
    int DEFAULT_ASYNC_WORKERS = 4;
    /** Default response threads of adb/adp: {@value}. */
    int DEFAULT_ASYNC_RESPONSE_THREADS = 4;
    /** Default response threads of aib/aip: {@value}. */
    int DEFAULT_INLINE_RESPONSE_THREADS = 1;

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
    int DEFAULT_REQUEST_THREADS = 64;
    /** Default workers of {@code type1}: {@value}. */
    int DEFAULT_TYPE1_WORKERS = 32;
    /** Default fixed workers of {@code type2b-fixed}: {@value}. */
    int DEFAULT_TYPE2B_WORKERS = 8;
    /** Largest pool or loop count accepted: {@value}. */
    int MAX_THREADS = 4096;

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

    /**
     * Thread-per-request: a pool of request threads (or a virtual thread per request) runs each
     * request with blocking shard calls; or, {@code inline}, the I/O loop runs it itself.
     *
     * @param frontends I/O loops that accept and hand over requests (in-line: that run them); 0 = all
     * @param threads request threads; 0 with {@code virtualThreads} or {@code inline}
     * @param virtualThreads a virtual thread per request instead of a pool
     * @param inline the I/O loop runs the whole request itself (μTune's in-line models; the loop
     *     blocks in the shard calls)
     * @param busyPoll the loops busy-poll
     * @param style the μTune name ({@code sib}, {@code sip}, {@code sdb}, {@code sdp}) it was written
     *     as, or {@code null}
     */
    record ThreadPerRequest(int frontends, int threads, boolean virtualThreads, boolean inline, boolean busyPoll,
            Style style) implements Configuration {

        /** Checks the sizes and that the axes fit together. */
        public ThreadPerRequest {
            check("frontends", frontends);
            check("threads", threads);
            if ((virtualThreads || inline) && threads != 0) {
                throw new IllegalArgumentException("threads: " + threads + " (expected: 0 with "
                        + (virtualThreads ? "virtual threads" : "in-line execution") + ", which have no pool)");
            }
            if (virtualThreads && inline) {
                throw new IllegalArgumentException("virtualThreads and inline: pick one (in-line runs on the I/O loop)");
            }
            if (!virtualThreads && !inline && threads == 0) {
                throw new IllegalArgumentException("threads: 0 (expected: 1.." + MAX_THREADS
                        + ", or virtual threads, or in-line)");
            }
            if (style != null && (style.async() || style.dispatch() == inline || style.poll() != busyPoll
                    || virtualThreads)) {
                throw new IllegalArgumentException("style " + style.label() + " does not describe this configuration"
                        + " (expected: sib/sip in-line, sdb/sdp with a pool, poll as the style says)");
            }
        }

        /** {@return a pool of {@code threads} request threads, blocking, on all I/O loops} */
        public static ThreadPerRequest pool(int threads) {
            return new ThreadPerRequest(0, threads, false, false, false, null);
        }

        /** {@return a virtual thread per request, on all I/O loops} */
        public static ThreadPerRequest virtual() {
            return new ThreadPerRequest(0, 0, true, false, false, null);
        }

        @Override
        public Kind kind() {
            return Kind.THREAD;
        }

        @Override
        public String name() {
            if (style != null) {
                return styleName(style, frontends, threads, 0);
            }
            StringBuilder b = new StringBuilder("thread");
            if (frontends != 0) {
                b.append('-').append(frontends).append('f');
            }
            b.append(virtualThreads ? "-virtual" : "-" + threads);
            return suffix(b, busyPoll, null);
        }

        @Override
        public String toString() {
            return name();
        }
    }

    /**
     * Type-1: I/O loops hand each request to a worker pool, whose workers plan, call the shards
     * asynchronously and merge.
     *
     * @param frontends I/O loops that accept requests; 0 = all
     * @param workers worker threads, at least 1
     * @param busyPoll the loops busy-poll
     */
    record Type1(int frontends, int workers, boolean busyPoll) implements Configuration {

        /** Checks the sizes. */
        public Type1 {
            check("frontends", frontends);
            checkPositive("workers", workers);
        }

        @Override
        public Kind kind() {
            return Kind.TYPE1;
        }

        @Override
        public String name() {
            StringBuilder b = new StringBuilder("type1");
            if (frontends != 0) {
                b.append('-').append(frontends).append('f');
            }
            b.append('-').append(workers);
            return suffix(b, busyPoll, null);
        }

        @Override
        public String toString() {
            return name();
        }
    }

    /**
     * Type-2a: frontend loops take requests and plan, backend loops own the shard connections and
     * handle the replies; optionally the plan is dispatched to a worker pool (μTune's ad* styles).
     *
     * @param frontends frontend loops; 0 = all I/O loops
     * @param backends backend loops; 0 = as many as I/O loops
     * @param dispatchWorkers workers the plan is dispatched to; 0 = planned on the frontend loop
     * @param busyPoll the loops busy-poll
     * @param style the μTune name ({@code aib}, {@code aip}, {@code adb}, {@code adp}) it was written
     *     as, or {@code null}
     */
    record Type2a(int frontends, int backends, int dispatchWorkers, boolean busyPoll, Style style)
            implements Configuration {

        /** Checks the sizes and that the style, if any, fits. */
        public Type2a {
            check("frontends", frontends);
            check("backends", backends);
            check("dispatchWorkers", dispatchWorkers);
            if (style != null && (!style.async() || style.dispatch() != (dispatchWorkers > 0)
                    || style.poll() != busyPoll || backends == 0)) {
                throw new IllegalArgumentException("style " + style.label() + " does not describe this configuration"
                        + " (expected: aib/aip without workers, adb/adp with, response threads given, poll as the"
                        + " style says)");
            }
        }

        /** {@return {@code frontends} frontend loops and {@code backends} backend loops, blocking} */
        public static Type2a of(int frontends, int backends) {
            return new Type2a(frontends, backends, 0, false, null);
        }

        @Override
        public Kind kind() {
            return Kind.TYPE2A;
        }

        @Override
        public String name() {
            if (style != null) {
                return styleName(style, frontends, dispatchWorkers, backends);
            }
            StringBuilder b = new StringBuilder("type2a");
            loops(b, frontends, backends);
            if (dispatchWorkers != 0) {
                b.append('-').append(dispatchWorkers).append('w');
            }
            return suffix(b, busyPoll, null);
        }

        @Override
        public String toString() {
            return name();
        }
    }

    /**
     * Type-2b: frontend loops take requests and plan, reactor loops own the shard connections and
     * hand each reply to a worker pool.
     *
     * @param frontends frontend loops; 0 = all I/O loops
     * @param reactors reactor loops; 0 = one
     * @param fixedWorkers a fixed pool of this many workers; 0 = an on-demand (cached) pool
     * @param busyPoll the loops busy-poll
     */
    record Type2b(int frontends, int reactors, int fixedWorkers, boolean busyPoll) implements Configuration {

        /** Checks the sizes. */
        public Type2b {
            check("frontends", frontends);
            check("reactors", reactors);
            check("fixedWorkers", fixedWorkers);
        }

        /** {@return whether the workers are a fixed pool (else cached, created on demand)} */
        public boolean fixedPool() {
            return fixedWorkers > 0;
        }

        @Override
        public Kind kind() {
            return Kind.TYPE2B;
        }

        @Override
        public String name() {
            StringBuilder b = new StringBuilder("type2b");
            loops(b, frontends, reactors);
            if (fixedWorkers > 0) {
                b.append("-fixed-").append(fixedWorkers);
            }
            return suffix(b, busyPoll, null);
        }

        @Override
        public String toString() {
            return name();
        }
    }

    /**
     * DoubleFace: each loop serves both sides — it takes requests, calls the shards over its own
     * connections, and processes the replies of an iteration in the reply order.
     *
     * @param loops loops: the first N of the server's I/O loops; 0 = all
     * @param busyPoll the loops busy-poll
     * @param replyOrder reply order ({@code fifo}, {@code completion-first},
     *     {@code completion-first-arrival}; aliases {@code cf}, {@code cfa}), or {@code null} for the
     *     server's default ({@code FanoutServer.Builder.replyOrder}); stored canonical
     */
    record DoubleFace(int loops, boolean busyPoll, String replyOrder) implements Configuration {

        /** Checks the loop count and canonicalises the reply order's name. */
        public DoubleFace {
            check("loops", loops);
            if (replyOrder != null) {
                replyOrder = ReplyOrder.create(replyOrder).name();
            }
        }

        /** {@return DoubleFace on all I/O loops, blocking, with the server's reply order} */
        public static DoubleFace of() {
            return new DoubleFace(0, false, null);
        }

        @Override
        public int frontends() {
            return loops;
        }

        @Override
        public Kind kind() {
            return Kind.DOUBLEFACE;
        }

        @Override
        public String name() {
            StringBuilder b = new StringBuilder("doubleface");
            if (loops != 0) {
                b.append('-').append(loops);
            }
            return suffix(b, busyPoll, replyOrder);
        }

        @Override
        public String toString() {
            return name();
        }
    }

    private static String styleName(Style style, int network, int workers, int response) {
        StringBuilder b = new StringBuilder(style.label());
        if (network != 0) {
            b.append('-').append(network).append('n');
        }
        if (style.dispatch()) {
            b.append('-').append(workers).append('w');
        }
        if (style.async()) {
            b.append('-').append(response).append('r');
        }
        return b.toString();
    }

    private static void loops(StringBuilder b, int frontends, int backends) {
        if (frontends != 0 && backends != 0) {
            b.append('-').append(frontends).append('f').append(backends).append('b');
        } else if (frontends != 0) {
            b.append('-').append(frontends).append('f');
        } else if (backends != 0) {
            b.append('-').append(backends).append('b');
        }
    }

    private static String suffix(StringBuilder b, boolean busyPoll, String replyOrder) {
        if (busyPoll) {
            b.append("-poll");
        }
        if (replyOrder != null) {
            b.append(switch (replyOrder) {
                case "fifo" -> "-fifo";
                case "completion-first-arrival" -> "-cfa";
                default -> "-cf";
            });
        }
        return b.toString();
    }

    private static void check(String what, int n) {
        if (n < 0 || n > MAX_THREADS) {
            throw new IllegalArgumentException(what + ": " + n + " (expected: 0.." + MAX_THREADS + ")");
        }
    }

    private static void checkPositive(String what, int n) {
        if (n < 1 || n > MAX_THREADS) {
            throw new IllegalArgumentException(what + ": " + n + " (expected: 1.." + MAX_THREADS + ")");
        }
    }

    /**
     * Parses a configuration name.
     *
     * @throws IllegalArgumentException with the offending part and what was expected
     */
    static Configuration parse(String name) {
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
                        throw bad(name, p, "reply orders apply to doubleface");
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
        return switch (kind) {
            case THREAD -> new ThreadPerRequest(frontends, workers, virtual, false, poll, null);
            case TYPE1 -> new Type1(frontends, workers, poll);
            case TYPE2A -> new Type2a(frontends, backends, workers, poll, null);
            case TYPE2B -> new Type2b(frontends, backends, fixed ? workers : 0, poll);
            case DOUBLEFACE -> new DoubleFace(frontends, poll, policy);
        };
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
            return new ThreadPerRequest(network, workers, false, !style.dispatch(), style.poll(), style);
        }
        int response = r != -1 ? r : style.dispatch() ? DEFAULT_ASYNC_RESPONSE_THREADS : DEFAULT_INLINE_RESPONSE_THREADS;
        int workers = style.dispatch() ? (w != -1 ? w : DEFAULT_ASYNC_WORKERS) : 0;
        return new Type2a(network, response, workers, style.poll(), style);
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

}
