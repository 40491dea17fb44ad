package io.doubleface.sched;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class CompletionFirstOrderTest {

    private final CompletionFirstOrder policy = new CompletionFirstOrder();

    /** Builds a batch from "owner:call" tokens, e.g. "a:1 b:1". */
    private static PendingReply[] batch(Map<String, TestOwner> owners, String spec) {
        String[] tokens = spec.trim().split("\\s+");
        PendingReply[] b = new PendingReply[tokens.length];
        for (int i = 0; i < tokens.length; i++) {
            String[] t = tokens[i].split(":");
            b[i] = new PendingReply(owners.get(t[0]), Integer.parseInt(t[1]), null);
        }
        return b;
    }

    private static Map<String, TestOwner> owners(Object... nameAndOutstanding) {
        Map<String, TestOwner> m = new LinkedHashMap<>();
        for (int i = 0; i < nameAndOutstanding.length; i += 2) {
            String n = (String) nameAndOutstanding[i];
            m.put(n, new TestOwner(n, (Integer) nameAndOutstanding[i + 1]));
        }
        return m;
    }

    private static String order(ReplyOrder p, PendingReply[] b) {
        PendingReply[] out = new PendingReply[b.length];
        p.order(b, b.length, out);
        return java.util.Arrays.stream(out).map(r -> r.owner() + ":" + r.call()).collect(Collectors.joining(" "));
    }

    @Test
    void javadocExampleRunsCompletingRequestsFirst() {
        Map<String, TestOwner> o = owners("a", 2, "b", 3, "c", 2);
        assertEquals("a:1 a:2 c:1 c:2 b:1", order(policy, batch(o, "a:1 b:1 c:1 a:2 c:2")));
    }

    @Test
    void completingRequestWithFewerRepliesGoesFirstEvenIfItArrivedLater() {
        Map<String, TestOwner> o = owners("big", 3, "small", 1);
        assertEquals("small:0 big:0 big:1 big:2", order(policy, batch(o, "big:0 big:1 big:2 small:0")));
    }

    @Test
    void arrivalVariantRunsCompletingRequestsInFirstArrivalOrderNotShortestFirst() {
        ReplyOrder cfa = ReplyOrder.create("cfa");
        assertEquals("completion-first-arrival", cfa.name());
        Map<String, TestOwner> o = owners("big", 3, "small", 1, "partial", 4);
        assertEquals("big:0 big:1 big:2 small:0 partial:0",
                order(cfa, batch(o, "partial:0 big:0 big:1 big:2 small:0")));
        Map<String, TestOwner> o2 = owners("a", 2, "b", 3, "c", 2);
        assertEquals("a:1 a:2 c:1 c:2 b:1", order(cfa, batch(o2, "a:1 b:1 c:1 a:2 c:2")));
    }

    @Test
    void completingRequestsWithEqualReplyCountsKeepFirstArrivalOrder() {
        Map<String, TestOwner> o = owners("x", 2, "y", 2, "z", 2);
        assertEquals("y:0 y:1 x:0 x:1 z:0 z:1", order(policy, batch(o, "y:0 x:0 z:0 z:1 x:1 y:1")));
    }

    @Test
    void incompleteRequestsComeLastInArrivalOrder() {
        Map<String, TestOwner> o = owners("p", 5, "q", 1, "r", 4);
        assertEquals("q:0 p:0 r:0 p:1 r:1", order(policy, batch(o, "p:0 r:0 q:0 p:1 r:1")));
    }

    @Test
    void batchOfOnlyIncompleteRequestsKeepsArrivalOrder() {
        Map<String, TestOwner> o = owners("a", 9, "b", 9, "c", 9);
        assertEquals("c:0 a:0 b:0 a:1 c:1", order(policy, batch(o, "c:0 a:0 b:0 a:1 c:1")));
    }

    @Test
    void repliesOfOneRequestKeepArrivalOrder() {
        Map<String, TestOwner> o = owners("a", 4);
        assertEquals("a:3 a:0 a:2 a:1", order(policy, batch(o, "a:3 a:0 a:2 a:1")));
    }

    @Test
    void emptyBatchWritesNothing() {
        PendingReply[] out = new PendingReply[1];
        policy.order(new PendingReply[0], 0, out);
        assertNull(out[0]);
    }

    @Test
    void singleReplyIsCopied() {
        PendingReply r = new PendingReply(new TestOwner("a", 3), 0, null);
        PendingReply[] out = new PendingReply[1];
        policy.order(new PendingReply[] {r}, 1, out);
        assertSame(r, out[0]);
    }

    @Test
    void onlyTheFirstSizeEntriesOfTheBatchAreOrdered() {
        Map<String, TestOwner> o = owners("a", 2, "b", 1);
        PendingReply[] b = batch(o, "a:0 b:0 a:1");
        PendingReply[] out = new PendingReply[3];
        policy.order(b, 2, out); // a:1 is not part of the batch: a stays incomplete
        assertEquals("b", out[0].owner().toString());
        assertEquals("a", out[1].owner().toString());
        assertNull(out[2]);
    }

    /**
     * Random batches over random requests: the output is a permutation of the input and follows
     * the policy's rules.
     */
    @Test
    void orderIsAPermutationFollowingTheRulesForRandomBatches() {
        Random rnd = new Random(20240611);
        for (int round = 0; round < 2000; round++) {
            int size = 1 + rnd.nextInt(256);
            int ownerCount = 1 + rnd.nextInt(Math.min(size, 40));
            List<TestOwner> owners = new ArrayList<>();
            for (int i = 0; i < ownerCount; i++) {
                owners.add(new TestOwner("o" + i, 0));
            }
            PendingReply[] b = randomBatch(rnd, owners, size);
            checkOrder(policy, b, size, "round " + round);
        }
    }

    /** One policy instance over many batches whose requests recur: its epoch marks must not leak between calls. */
    @Test
    void reuseAcrossManyBatchesWithRecurringRequestsStaysCorrect() {
        Random rnd = new Random(7);
        List<TestOwner> owners = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            owners.add(new TestOwner("o" + i, 0));
        }
        for (int round = 0; round < 20_000; round++) {
            int size = 1 + rnd.nextInt(round % 100 == 0 ? 300 : 24);
            PendingReply[] b = randomBatch(rnd, owners, size);
            checkOrder(policy, b, size, "round " + round);
        }
    }

    private static PendingReply[] randomBatch(Random rnd, List<TestOwner> owners, int size) {
        PendingReply[] b = new PendingReply[size];
        Map<TestOwner, Integer> count = new IdentityHashMap<>();
        for (int i = 0; i < size; i++) {
            TestOwner o = owners.get(rnd.nextInt(owners.size()));
            int c = count.merge(o, 1, Integer::sum);
            b[i] = new PendingReply(o, c - 1, null);
        }
        for (TestOwner o : owners) {
            int c = count.getOrDefault(o, 0);
            // about half the requests complete in this batch
            o.outstanding = rnd.nextBoolean() ? c : c + 1 + rnd.nextInt(5);
        }
        return b;
    }

    /** Checks the permutation and the ordering rules of completion-first. */
    private static void checkOrder(ReplyOrder p, PendingReply[] b, int size, String where) {
        PendingReply[] out = new PendingReply[size];
        p.order(b, size, out);
        Set<PendingReply> in = Collections.newSetFromMap(new IdentityHashMap<>());
        Collections.addAll(in, b);
        Set<PendingReply> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        for (PendingReply r : out) {
            if (r == null || !in.contains(r) || !seen.add(r)) {
                fail(where + ": not a permutation: " + r);
            }
        }
        // facts about the batch
        Map<ReplyOwner, Integer> inBatch = new IdentityHashMap<>();
        Map<ReplyOwner, Integer> firstArrival = new IdentityHashMap<>();
        Map<PendingReply, Integer> arrival = new IdentityHashMap<>();
        for (int i = 0; i < size; i++) {
            inBatch.merge(b[i].owner(), 1, Integer::sum);
            firstArrival.putIfAbsent(b[i].owner(), i);
            arrival.put(b[i], i);
        }
        boolean inIncompletePart = false;
        PendingReply prev = null;
        for (PendingReply r : out) {
            ReplyOwner o = r.owner();
            boolean complete = inBatch.get(o) >= o.outstanding();
            if (!complete) {
                inIncompletePart = true;
                if (prev != null && !isComplete(prev, inBatch)) {
                    assertTrue(arrival.get(prev) < arrival.get(r), where + ": incomplete replies out of arrival order");
                }
            } else {
                assertTrue(!inIncompletePart, where + ": a completing reply after an incomplete one");
                if (prev != null && prev.owner() != o) {
                    ReplyOwner po = prev.owner();
                    int a = inBatch.get(po);
                    int c = inBatch.get(o);
                    assertTrue(a < c || (a == c && firstArrival.get(po) < firstArrival.get(o)),
                            where + ": completing requests not ordered by (replies, first arrival)");
                }
                if (prev != null && prev.owner() == o) {
                    assertTrue(arrival.get(prev) < arrival.get(r), where + ": replies of one request reordered");
                }
            }
            prev = r;
        }
        // each completing request's replies are contiguous
        Map<ReplyOwner, Integer> lastIndex = new IdentityHashMap<>();
        for (int i = 0; i < size; i++) {
            ReplyOwner o = out[i].owner();
            if (inBatch.get(o) >= o.outstanding()) {
                Integer last = lastIndex.put(o, i);
                assertTrue(last == null || last == i - 1, where + ": a completing request's replies are split");
            }
        }
    }

    private static boolean isComplete(PendingReply r, Map<ReplyOwner, Integer> inBatch) {
        return inBatch.get(r.owner()) >= r.owner().outstanding();
    }

    @Test
    void fifoKeepsArrivalOrder() {
        Map<String, TestOwner> o = owners("a", 2, "b", 3, "c", 2);
        FifoOrder fifo = new FifoOrder();
        assertEquals("fifo", fifo.name());
        assertEquals("a:1 b:1 c:1 a:2 c:2", order(fifo, batch(o, "a:1 b:1 c:1 a:2 c:2")));
    }

    @Test
    void createMakesFifo() {
        for (String name : new String[] {"fifo", "FIFO"}) {
            assertInstanceOf(FifoOrder.class, ReplyOrder.create(name), name);
        }
    }

    @Test
    void createMakesCompletionFirst() {
        for (String name : new String[] {"completion-first", "cf", "CF"}) {
            ReplyOrder p = ReplyOrder.create(name);
            assertInstanceOf(CompletionFirstOrder.class, p, name);
            assertEquals("completion-first", p.name());
        }
    }

    @Test
    void createReturnsAFreshInstanceEachTime() {
        assertTrue(ReplyOrder.create("cf") != ReplyOrder.create("cf"));
    }

    @Test
    void createRejectsUnknownPolicyNamingIt() {
        for (String name : new String[] {"lifo", "", "completion", "deadline"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> ReplyOrder.create(name));
            assertTrue(e.getMessage().contains("'" + name + "'"), e.getMessage());
            assertTrue(e.getMessage().contains("fifo") && e.getMessage().contains("completion-first"), e.getMessage());
        }
    }
}
