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
 *            | fifo | cf          reply scheduling policy (doubleface; default: the server's)
 * </pre>
 *
 * Frontend loops are the first N of the server's I/O loops ({@code --io-threads}); a
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
 */
public record Configuration(
        Kind kind, int frontends, int backends, int workers, boolean virtualThreads, boolean fixedPool,
        boolean busyPoll, String policy) {

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
        Kind kind = null;
        for (Kind k : Kind.values()) {
            if (k.label.equals(parts[0])) {
                kind = k;
            }
        }
        if (kind == null) {
            throw new IllegalArgumentException("configuration '" + name
                    + "': unknown model '" + parts[0] + "' (expected: thread, type1, type2a, type2b, doubleface)");
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
                } else if (p.equals("fifo") || p.equals("cf")) {
                    if (kind != Kind.DOUBLEFACE) {
                        throw bad(name, p, "scheduling policies apply to doubleface");
                    }
                    policy = p.equals("cf") ? "completion-first" : "fifo";
                } else {
                    throw bad(name, p, "N, NfMb, Nf, Mb, virtual, fixed, cached, poll, block, fifo or cf");
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
        return new Configuration(kind, frontends, backends, workers, virtual, fixed, poll, policy);
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

    /** The canonical name, e.g. {@code type2a-1f2b}, {@code thread-64}, {@code doubleface-poll}. */
    public String name() {
        StringBuilder b = new StringBuilder(kind.label);
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
            b.append(policy.equals("fifo") ? "-fifo" : "-cf");
        }
        return b.toString();
    }

    @Override
    public String toString() {
        return name();
    }
}
