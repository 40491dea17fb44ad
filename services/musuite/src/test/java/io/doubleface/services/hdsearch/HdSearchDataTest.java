package io.doubleface.services.hdsearch;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.services.hdsearch.v1.LeafReply;
import io.doubleface.services.hdsearch.v1.LeafRequest;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The corpus, the LSH index, the leaf and the merge, without a network. */
class HdSearchDataTest {

    static String digest(HdSearchData d) throws Exception {
        MessageDigest md = MessageDigest.getInstance("SHA-256");
        ByteBuffer b = ByteBuffer.allocate(d.dims() * 4);
        for (int i = 0; i < d.points(); i++) {
            b.clear();
            for (float x : d.point(i)) {
                b.putFloat(x);
            }
            md.update(b.array());
        }
        return HexFormat.of().formatHex(md.digest());
    }

    @Test
    void theSameSeedGivesTheSameBytesAndAnotherSeedOthers() throws Exception {
        String a = digest(HdSearchData.of(42, 500, 16, 10));
        assertEquals(a, digest(HdSearchData.of(42, 500, 16, 10)));
        assertNotEquals(a, digest(HdSearchData.of(43, 500, 16, 10)));
        assertNotEquals(a, digest(HdSearchData.of(42, 500, 16, 11)));
        assertArrayEquals(HdSearchData.of(1, 10, 4, 2).query(5), HdSearchData.of(1, 10, 4, 2).query(5));
        assertFalse(java.util.Arrays.equals(HdSearchData.of(1, 10, 4, 2).query(5), HdSearchData.of(1, 10, 4, 2).query(6)));
    }

    @Test
    void parametersAreChecked() {
        assertThrows(IllegalArgumentException.class, () -> HdSearchData.of(1, 0, 4, 1));
        assertThrows(IllegalArgumentException.class, () -> HdSearchData.of(1, 10, 0, 1));
        assertThrows(IllegalArgumentException.class, () -> HdSearchData.of(1, 10, 4, 11));
        HdSearchData d = HdSearchData.of(1, 10, 4, 2);
        assertThrows(IllegalArgumentException.class, () -> LshIndex.build(d, 0, 8, 1));
        assertThrows(IllegalArgumentException.class, () -> LshIndex.build(d, 8, 31, 1));
        assertThrows(IndexOutOfBoundsException.class, () -> d.point(10));
    }

    @Test
    void theIndexFindsEveryPointFromItsOwnVectorAndIsDeterministic() {
        HdSearchData d = HdSearchData.of(3, 300, 8, 5);
        LshIndex index = LshIndex.build(d, 4, 6, 11);
        LshIndex again = LshIndex.build(d, 4, 6, 11);
        for (int i = 0; i < d.points(); i++) {
            int[] c = index.candidates(d.point(i));
            assertTrue(java.util.Arrays.binarySearch(c, i) >= 0, "point " + i);
            for (int j = 1; j < c.length; j++) {
                assertTrue(c[j - 1] < c[j], "ascending and distinct");
            }
            assertArrayEquals(c, again.candidates(d.point(i)));
        }
    }

    @Test
    void aLeafAnswersTheNearestOfItsCandidatesAndRefusesOthers() {
        HdSearchData d = HdSearchData.of(5, 100, 4, 3);
        HdSearchLeaf leaf = new HdSearchLeaf(d, 2, 4);
        float[] q = d.query(0);
        LeafRequest.Builder r = LeafRequest.newBuilder().setK(3).addIds(2).addIds(6).addIds(10).addIds(14).addIds(98);
        for (float x : q) {
            r.addVector(x);
        }
        List<Object> out = new ArrayList<>();
        StreamObserver<LeafReply> obs = observer(out);
        leaf.nearest(r.build(), obs);
        LeafReply reply = (LeafReply) out.get(0);
        List<long[]> keys = new ArrayList<>();
        for (int id : new int[] {2, 6, 10, 14, 98}) {
            keys.add(new long[] {HdSearchService.key(HdSearchData.squaredDistance(d.point(id), 0, q), id)});
        }
        long[] best = HdSearchService.mergeSorted(keys, 3);
        assertEquals(3, reply.getIdsCount());
        for (int i = 0; i < 3; i++) {
            assertEquals(HdSearchService.id(best[i]), reply.getIds(i));
            assertEquals(HdSearchService.distance(best[i]), reply.getDistances(i));
        }
        out.clear();
        leaf.nearest(r.addIds(3).build(), obs); // 3 is on leaf 3
        assertTrue(out.get(0) instanceof StatusRuntimeException e && e.getMessage().contains("not a point of leaf 2"),
                out.toString());
    }

    @Test
    void theMergeTakesTheKSmallestOfSortedPartsAndHandlersRefuseUnsortedReplies() {
        long[] merged = HdSearchService.mergeSorted(List.of(new long[] {1, 5, 9}, new long[] {}, new long[] {2, 3}), 4);
        assertArrayEquals(new long[] {1, 2, 3, 5}, merged);
        assertArrayEquals(new long[] {1, 2, 3, 5, 9}, HdSearchService.mergeSorted(
                List.of(new long[] {1, 5, 9}, new long[] {2, 3}), 10));
        HdSearchQuery q = new HdSearchQuery(new float[1], 2, -1);
        LeafReply unsorted = LeafReply.newBuilder().addIds(1).addDistances(2f).addIds(2).addDistances(1f).build();
        assertThrows(IllegalStateException.class, () -> HdSearchService.partial(q, 0, unsorted));
        LeafReply tooMany = LeafReply.newBuilder().addIds(1).addIds(2).addIds(3).addDistances(1).addDistances(2)
                .addDistances(3).build();
        assertThrows(IllegalStateException.class, () -> HdSearchService.partial(q, 0, tooMany));
        LeafReply ok = LeafReply.newBuilder().addIds(7).addDistances(1f).addIds(2).addDistances(1.5f).build();
        long[] keys = HdSearchService.partial(q, 0, ok);
        assertEquals(7, HdSearchService.id(keys[0]));
        assertEquals(1.5f, HdSearchService.distance(keys[1]));
    }

    static StreamObserver<LeafReply> observer(List<Object> out) {
        return new StreamObserver<>() {
            @Override
            public void onNext(LeafReply value) {
                out.add(value);
            }

            @Override
            public void onError(Throwable t) {
                out.add(t);
            }

            @Override
            public void onCompleted() {}
        };
    }
}
