package io.doubleface.api;

import io.doubleface.driver.ShardException;
import java.util.ArrayList;
import java.util.List;

/**
 * The outcome of every call of one round, by call number, as {@link FanoutService#merge} sees it:
 * the processed reply of each call that succeeded, and for each one that did not (allowed by
 * {@link FailurePolicy#bestEffort()}, {@link FailurePolicy#quorum} or {@link FanoutPlan#optional})
 * the reason. Valid only during the {@code merge} call it is given to. Not thread-safe.
 *
 * <p>Reference-counted processed replies (a {@code ByteBuf} a {@link ReplyHandler} returned) are
 * released by the framework when {@code merge} returns. A response that keeps their bytes without
 * copying them takes them ({@link #take}: the framework's reference passes to the caller), e.g.
 * {@code Unpooled.wrappedBuffer(replies.take(0), …)}, or retains them ({@code get(0).retain()}),
 * and the written response then releases them.
 *
 * @param <P> the processed reply
 */
public interface Replies<P> {

    /** {@return the number of calls in the round; call numbers are {@code 0 .. size()-1}} */
    int size();

    /**
     * The processed reply of call {@code call}, or {@code null} if it has none (see {@link #ok}).
     *
     * @param call the call number, {@code 0 .. size()-1}
     * @return what the call's {@link ReplyHandler} returned (which may itself be {@code null}), or
     *     {@code null} if the call failed
     * @throws IndexOutOfBoundsException if there is no such call
     */
    P get(int call);

    /**
     * Whether call {@code call} got a reply (that its handler processed).
     *
     * @param call the call number, {@code 0 .. size()-1}
     * @return {@code true} if the call succeeded, {@code false} if it failed or was late
     * @throws IndexOutOfBoundsException if there is no such call
     */
    boolean ok(int call);

    /**
     * Why call {@code call} has no reply: the driver's failure, or a {@link ShardException.Kind#TIMEOUT}
     * failure saying the request deadline passed first; {@code null} if it succeeded.
     *
     * @param call the call number, {@code 0 .. size()-1}
     * @return the failure, whose {@link ShardException#shard()} is the call's shard; {@code null} if
     *     the call succeeded
     * @throws IndexOutOfBoundsException if there is no such call
     */
    ShardException failure(int call);

    /**
     * The backend of call {@code call}.
     *
     * @param call the call number, {@code 0 .. size()-1}
     * @return the backend the call was planned on
     * @throws IndexOutOfBoundsException if there is no such call
     */
    Backend<?> backend(int call);

    /**
     * The shard of call {@code call} in its backend.
     *
     * @param call the call number, {@code 0 .. size()-1}
     * @return the shard, {@code 0 .. backend(call).shardCount()-1}
     */
    int shard(int call);

    /** {@return the number of calls without a reply, {@code 0 .. size()}} */
    int failed();

    /** {@return the round number: 0 for the calls of {@code plan}, 1 for those of the first {@code merge}, …} */
    int round();

    /**
     * {@return the reference call {@code call} was planned with, or {@code null} if it was planned
     * with a {@link ReplyHandler} only}
     *
     * @param call the call number, {@code 0 .. size()-1}
     */
    CallRef<?> ref(int call);

    /**
     * {@return the number of the first call of this round planned with {@code ref}, or {@code -1}
     * if none was}
     *
     * @param ref a reference handed to {@link FanoutPlan#call(Backend, int, io.doubleface.driver.Command, CallRef)}
     */
    default int indexOf(CallRef<?> ref) {
        for (int i = 0, n = size(); i < n; i++) {
            if (ref(i) == ref) {
                return i;
            }
        }
        return -1;
    }

    /**
     * The reply (or its handler's result) of the call planned with {@code ref}; the first such call
     * if several were.
     *
     * @param <T> the reference's type
     * @param ref the reference the call was planned with
     * @return the reply, or {@code null} if the call failed (see {@link #failure(CallRef)}) or its
     *     handler returned {@code null}
     * @throws IllegalArgumentException if no call of this round was planned with {@code ref}
     */
    @SuppressWarnings("unchecked")
    default <T> T get(CallRef<T> ref) {
        return (T) get(require(ref));
    }

    /**
     * The reply (or handler result) of call {@code call}, typed by the reference it was planned
     * with: for loops over several calls under one reference, without a list or a cast.
     *
     * <pre>{@code
     * for (int i = 0; i < replies.size(); i++) {
     *     ByteBuf value = replies.get(i, VALUE);
     *     ...
     * }
     * }</pre>
     *
     * @param <T> the reference's type
     * @param call the call number, {@code 0 .. size()-1}
     * @param ref the reference call {@code call} was planned with
     * @return the reply, or {@code null} if the call failed or its handler returned {@code null}
     * @throws IllegalArgumentException if call {@code call} was planned with another reference, or none
     */
    @SuppressWarnings("unchecked")
    default <T> T get(int call, CallRef<T> ref) {
        CallRef<?> planned = ref(call);
        if (planned != ref) {
            throw new IllegalArgumentException("call " + call + " was planned with "
                    + (planned == null ? "no reference" : "reference '" + planned.name() + "'") + ", not '"
                    + (ref == null ? null : ref.name()) + "'");
        }
        return (T) get(call);
    }

    /**
     * Hands call {@code call}'s processed reply over to the caller with a reference of its own: what
     * {@code get(call)} and then {@code retain()} give, without touching the reference count. The
     * first {@code take} of a call moves the framework's own reference (which it would otherwise
     * release when {@code merge} returns), so a response that keeps a reference-counted reply, a
     * {@code ByteBuf} value say, costs no atomic update of its count; a later {@code take} of the same
     * call retains. The caller releases what it took, usually by writing it in the response. Not
     * reference-counted replies are returned as they are.
     *
     * <pre>{@code
     * CompositeByteBuf body = Unpooled.compositeBuffer(replies.size());
     * for (int i = 0; i < replies.size(); i++) {
     *     body.addComponent(true, replies.take(i, VALUE));
     * }
     * return body;
     * }</pre>
     *
     * @param call the call number, {@code 0 .. size()-1}
     * @return the reply, the caller's to release if it is reference-counted; {@code null} if the
     *     call failed or its handler returned {@code null}
     * @throws IndexOutOfBoundsException if there is no such call
     */
    @SuppressWarnings("unchecked")
    default P take(int call) {
        return (P) io.netty.util.ReferenceCountUtil.retain(get(call));
    }

    /**
     * {@link #take(int)}, typed by the reference call {@code call} was planned with.
     *
     * @param <T> the reference's type
     * @param call the call number, {@code 0 .. size()-1}
     * @param ref the reference call {@code call} was planned with
     * @return the reply, the caller's to release if it is reference-counted; {@code null} if the
     *     call failed or its handler returned {@code null}
     * @throws IllegalArgumentException if call {@code call} was planned with another reference, or none
     */
    @SuppressWarnings("unchecked")
    default <T> T take(int call, CallRef<T> ref) {
        get(call, ref); // checks the reference
        return (T) take(call);
    }

    /**
     * {@return whether the (first) call planned with {@code ref} succeeded}
     *
     * @param ref the reference the call was planned with
     * @throws IllegalArgumentException if no call of this round was planned with {@code ref}
     */
    default boolean ok(CallRef<?> ref) {
        return ok(require(ref));
    }

    /**
     * {@return why the (first) call planned with {@code ref} failed, or {@code null} if it succeeded}
     *
     * @param ref the reference the call was planned with
     * @throws IllegalArgumentException if no call of this round was planned with {@code ref}
     */
    default ShardException failure(CallRef<?> ref) {
        return failure(require(ref));
    }

    /**
     * The replies (or handler results) of every successful call planned with {@code ref}, in call
     * order: a broadcast's in shard order. Failed calls are left out.
     *
     * @param <T> the reference's type
     * @param ref the reference the calls were planned with
     * @return a new list; empty if no call used {@code ref} or all of them failed
     */
    @SuppressWarnings("unchecked")
    default <T> List<T> all(CallRef<T> ref) {
        List<T> out = new ArrayList<>();
        for (int i = 0, n = size(); i < n; i++) {
            if (ref(i) == ref && ok(i)) {
                out.add((T) get(i));
            }
        }
        return out;
    }

    /** {@return what the server knows about the request: route, headers, deadline left, …} */
    RequestContext context();

    private int require(CallRef<?> ref) {
        int i = indexOf(ref);
        if (i < 0) {
            throw new IllegalArgumentException("no call of round " + round() + " was planned with "
                    + (ref == null ? "a null reference" : "reference '" + ref.name() + "'"));
        }
        return i;
    }

    /**
     * The processed replies of the calls that succeeded, in call order. Safe to keep after merge
     * (a new list, or a view of slots the framework never reuses).
     *
     * @return the replies, {@code size() - failed()} of them (possibly a fixed-size list)
     */
    default List<P> values() {
        List<P> out = new ArrayList<>(size() - failed());
        for (int i = 0; i < size(); i++) {
            if (ok(i)) {
                out.add(get(i));
            }
        }
        return out;
    }

    /** {@return the failures of the calls without a reply, in call order (a new list; empty if none)} */
    default List<ShardException> failures() {
        List<ShardException> out = new ArrayList<>(failed());
        for (int i = 0; i < size(); i++) {
            if (!ok(i)) {
                out.add(failure(i));
            }
        }
        return out;
    }
}
