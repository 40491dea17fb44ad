package io.doubleface.api;

import java.util.Objects;

/**
 * A typed name for the reply of a call, so that {@code merge} reads each backend's reply as its own
 * type without a common reply type, casts or call numbers. Declared once, as a constant, and handed
 * to {@link FanoutPlan#call(Backend, io.doubleface.driver.Command, CallRef) plan.call}; {@link Replies#get(CallRef)} then
 * gives that call's reply as {@code T}:
 *
 * <pre>{@code
 * static final CallRef<Map<String, String>> USER = CallRef.named("user");
 * static final CallRef<Document> ORDERS = CallRef.named("orders");
 *
 * public void plan(Long id, FanoutPlan<Long, Object> plan) {
 *     plan.call(redis, REDIS.hgetall("user:" + id), USER);                     // the raw reply
 *     plan.call(mongo, 0, Mongo.find("orders", Filters.eq("user", id)), ORDERS,
 *             (call, docs) -> docs.isEmpty() ? null : docs.get(0));           // or a handler's result
 * }
 *
 * public Page merge(Long id, Replies<Object> replies, FanoutPlan<Long, Object> next) {
 *     Map<String, String> user = replies.get(USER);
 *     Document orders = replies.get(ORDERS);
 *     ...
 * }
 * }</pre>
 *
 * <p>A reference is only a name: it holds no reply, so one constant serves every request and
 * planning a call with it allocates nothing. Several calls of a round may share one reference (a
 * {@link FanoutPlan#broadcast(Backend, io.doubleface.driver.Command, CallRef) broadcast} does): {@link Replies#all} gives
 * their replies in call order, {@link Replies#get(CallRef)} the first. Services that read their
 * replies by reference declare their processed-reply type {@code P} as {@code Object}.
 *
 * <p>Compared by identity: two references with the same name are different references.
 *
 * @param <T> the type of the reply (or of its handler's result) this reference names
 * @see FanoutPlan#call(Backend, int, io.doubleface.driver.Command, CallRef, CallHandler)
 */
public final class CallRef<T> {

    private final String name;

    private CallRef(String name) {
        this.name = name;
    }

    /**
     * Creates a reference; keep it in a constant.
     *
     * @param <T> the type of the reply it names
     * @param name what the reference is called in messages (e.g. {@code "user"}), not {@code null}
     * @return a new reference, equal only to itself
     */
    public static <T> CallRef<T> named(String name) {
        return new CallRef<>(Objects.requireNonNull(name, "name"));
    }

    /** {@return the name given to {@link #named}} */
    public String name() {
        return name;
    }

    @Override
    public String toString() {
        return "CallRef[" + name + "]";
    }
}
