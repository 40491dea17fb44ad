package io.doubleface.sched;

import java.util.Arrays;

/**
 * Fanout-completion priority (DoubleFaceAD, §4): of the replies decoded in one loop iteration,
 * first those of requests whose <em>last</em> outstanding reply is in this batch — so their
 * merge and response can go out now — ordered by how few replies they still need processed
 * (shortest remaining work first; ties by first arrival); then the replies of requests that stay
 * incomplete after this batch, in arrival order. Within a request, replies keep arrival order.
 *
 * <pre>
 *   batch:  a1 b1 c1 a2 c2        outstanding: a=2, b=3, c=2
 *   groups: a{a1,a2} complete(2)  b{b1} incomplete  c{c1,c2} complete(2)
 *   order:  a1 a2 c1 c2 b1
 * </pre>
 *
 * <p>Variant {@code completion-first-arrival} ({@link #arrivalOrder()}): the complete groups in
 * the order of their first reply instead of shortest first (the paper's Fig. 12 only says
 * "complete ones first"). Shortest first favours small requests, which lowers the mean but, in a
 * mix of large and small fanouts whose replies mostly arrive in the same batch, moves every large
 * request behind the small ones of its batch: the large class's tail, and so the mix's p99, can
 * get worse (docs/experiments.md, priority).
 *
 * <p>Cost: O(n + g log g) for n replies in g requests (O(n + g) in arrival order), no
 * allocation once the scratch arrays have grown to the largest batch seen.
 */
public final class CompletionFirstOrder implements ReplyOrder {

    private final boolean shortestFirst;
    private int epoch;
    private ReplyOwner[] groups = new ReplyOwner[64];
    private long[] keys = new long[64];

    /** Complete requests first, shortest remaining work first ({@code completion-first}). */
    public CompletionFirstOrder() {
        this(true);
    }

    private CompletionFirstOrder(boolean shortestFirst) {
        this.shortestFirst = shortestFirst;
    }

    /** Complete requests first, in the order of their first reply ({@code completion-first-arrival}). */
    public static CompletionFirstOrder arrivalOrder() {
        return new CompletionFirstOrder(false);
    }

    @Override
    public String name() {
        return shortestFirst ? "completion-first" : "completion-first-arrival";
    }

    @Override
    public void order(PendingReply[] batch, int size, PendingReply[] out) {
        if (size <= 1) {
            if (size == 1) {
                out[0] = batch[0];
            }
            return;
        }
        int mark = ++epoch;
        if (mark == 0) { // wrapped: 0 is the "never marked" value
            mark = ++epoch;
        }
        if (groups.length < size) {
            groups = new ReplyOwner[Math.max(size, groups.length * 2)];
            keys = new long[groups.length];
        }
        // 1. group replies by request, keeping arrival order inside each group
        int g = 0;
        for (int i = 0; i < size; i++) {
            PendingReply r = batch[i];
            ReplyOwner o = r.owner;
            r.nextInGroup = null;
            if (o.mark != mark) {
                o.mark = mark;
                o.batchCount = 0;
                o.firstArrival = i;
                o.head = r;
                o.tail = r;
                groups[g++] = o;
            } else {
                o.tail.nextInGroup = r;
                o.tail = r;
            }
            o.batchCount++;
        }
        // 2. complete groups sorted by (replies in batch, first arrival); key packs both. Groups
        //    are numbered in first-arrival order, so without the count the keys are sorted already
        int complete = 0;
        for (int i = 0; i < g; i++) {
            ReplyOwner o = groups[i];
            if (o.batchCount >= o.outstanding()) {
                keys[complete++] = shortestFirst ? ((long) o.batchCount << 32) | i : i;
            }
        }
        if (shortestFirst) {
            Arrays.sort(keys, 0, complete);
        }
        int n = 0;
        for (int k = 0; k < complete; k++) {
            ReplyOwner o = groups[(int) keys[k]];
            for (PendingReply r = o.head; r != null; r = r.nextInGroup) {
                out[n++] = r;
            }
        }
        // 3. the rest in arrival order
        if (complete < g) {
            for (int i = 0; i < size; i++) {
                ReplyOwner o = batch[i].owner;
                if (o.batchCount < o.outstanding()) {
                    out[n++] = batch[i];
                }
            }
        }
        for (int i = 0; i < g; i++) {
            groups[i].head = null;
            groups[i].tail = null;
            groups[i] = null;
        }
    }
}
