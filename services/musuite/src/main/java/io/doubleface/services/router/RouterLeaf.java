package io.doubleface.services.router;

import io.doubleface.services.router.v1.LeafGetReply;
import io.doubleface.services.router.v1.LeafGetRequest;
import io.doubleface.services.router.v1.LeafSetReply;
import io.doubleface.services.router.v1.LeafSetRequest;
import io.doubleface.services.router.v1.RouterLeafGrpc;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One Router leaf: an in-memory key-value store (a {@link ConcurrentHashMap}), one replica of one
 * group, preloaded with the {@link RouterData} keys of its group, served as
 * {@code doubleface.router.v1.RouterLeaf}. It does not check that a key belongs to its group: the
 * mid-tier routes. Thread-safe.
 */
public final class RouterLeaf extends RouterLeafGrpc.RouterLeafImplBase {

    private final ConcurrentHashMap<String, String> store = new ConcurrentHashMap<>();
    private final AtomicLong gets = new AtomicLong();
    private final AtomicLong sets = new AtomicLong();

    /**
     * Leaf {@code leaf} of {@code layout}, preloaded with its group's keys of {@code data}.
     *
     * @param data the preloaded keys
     * @param layout the groups and replicas
     * @param leaf this leaf's index
     */
    public RouterLeaf(RouterData data, RouterKeys layout, int leaf) {
        if (leaf < 0 || leaf >= layout.leaves()) {
            throw new IllegalArgumentException("leaf: " + leaf + " (expected: 0.." + (layout.leaves() - 1) + ")");
        }
        int group = leaf / layout.replicas();
        for (int n = 0; n < data.keys(); n++) {
            String key = RouterData.key(n);
            if (layout.group(key) == group) {
                store.put(key, data.value(n));
            }
        }
    }

    @Override
    public void get(LeafGetRequest request, StreamObserver<LeafGetReply> reply) {
        if (request.getKey().isEmpty()) {
            reply.onError(Status.INVALID_ARGUMENT.withDescription("key: empty").asRuntimeException());
            return;
        }
        gets.incrementAndGet();
        String v = store.get(request.getKey());
        reply.onNext(v == null ? LeafGetReply.getDefaultInstance()
                : LeafGetReply.newBuilder().setFound(true).setValue(v).build());
        reply.onCompleted();
    }

    @Override
    public void set(LeafSetRequest request, StreamObserver<LeafSetReply> reply) {
        if (request.getKey().isEmpty()) {
            reply.onError(Status.INVALID_ARGUMENT.withDescription("key: empty").asRuntimeException());
            return;
        }
        sets.incrementAndGet();
        store.put(request.getKey(), request.getValue());
        reply.onNext(LeafSetReply.getDefaultInstance());
        reply.onCompleted();
    }

    /** {@return the gets this leaf served} */
    public long gets() {
        return gets.get();
    }

    /** {@return the sets this leaf stored} */
    public long sets() {
        return sets.get();
    }

    /** {@return the number of keys held} */
    public int size() {
        return store.size();
    }
}
