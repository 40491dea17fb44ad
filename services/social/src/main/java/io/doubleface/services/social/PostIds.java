package io.doubleface.services.social;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Post ids: {@code id = sequence << }{@value #SERVER_BITS}{@code  | server}. Each mid-tier has its
 * own server id ({@code 0 ..} {@value #MAX_SERVER}; {@code serve social --server-id}) and counts its
 * own sequence up from a start, so mid-tiers never need to agree on anything and two of them never
 * make the same id; the seeded posts use server {@value #SEEDED_SERVER} and sequence {@code p + 1}.
 * The start defaults to the clock in microseconds when the mid-tier starts, so a restarted mid-tier
 * does not reuse the ids of its last run unless it made more than a million posts a second; give a
 * fixed start for a reproducible run. Ids are positive and ordered by sequence within one server.
 *
 * <p>Thread-safe: {@link #next} from any thread.
 */
public final class PostIds {

    /** Low bits of an id that hold the server id: {@value}. */
    public static final int SERVER_BITS = 10;
    /** Highest server id of a mid-tier: {@value}. */
    public static final int MAX_SERVER = (1 << SERVER_BITS) - 2;
    /** Server id of the seeded posts: {@value}. */
    public static final int SEEDED_SERVER = (1 << SERVER_BITS) - 1;
    /** Highest sequence: ids stay positive. */
    public static final long MAX_SEQUENCE = (Long.MAX_VALUE >>> SERVER_BITS) - 1;

    private final int server;
    private final AtomicLong next;

    /**
     * Ids of mid-tier {@code server}, the first with sequence {@code first}.
     *
     * @param server the server id, {@code 0 ..} {@value #MAX_SERVER}
     * @param first the first sequence, {@code 1 .. MAX_SEQUENCE}
     * @throws IllegalArgumentException if either is out of range
     */
    public PostIds(int server, long first) {
        if (server < 0 || server > MAX_SERVER) {
            throw new IllegalArgumentException("server-id: " + server + " (expected: 0.." + MAX_SERVER + ")");
        }
        if (first < 1 || first > MAX_SEQUENCE) {
            throw new IllegalArgumentException("first-post-sequence: " + first + " (expected: 1.." + MAX_SEQUENCE + ")");
        }
        this.server = server;
        this.next = new AtomicLong(first);
    }

    /** {@return the default first sequence: the clock, in microseconds since the epoch} */
    public static long clockSequence() {
        java.time.Instant now = java.time.Instant.now();
        return now.getEpochSecond() * 1_000_000 + now.getNano() / 1_000;
    }

    /** {@return a new id} */
    public long next() {
        return id(next.getAndIncrement(), server);
    }

    /**
     * {@return the id of {@code sequence} on {@code server}}
     *
     * @param sequence the sequence
     * @param server the server id
     */
    public static long id(long sequence, int server) {
        return sequence << SERVER_BITS | server;
    }

    /**
     * {@return the id of seeded post {@code p}}
     *
     * @param p the seeded post's number
     */
    public static long seeded(long p) {
        return id(p + 1, SEEDED_SERVER);
    }

    /**
     * {@return the server id that made {@code id}}
     *
     * @param id a post id
     */
    public static int server(long id) {
        return (int) (id & ((1 << SERVER_BITS) - 1));
    }
}
