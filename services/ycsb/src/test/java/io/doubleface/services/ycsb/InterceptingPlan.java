package io.doubleface.services.ycsb;

import io.doubleface.api.Backend;
import io.doubleface.driver.Command;
import io.doubleface.api.FailurePolicy;
import io.doubleface.api.FanoutPlan;
import io.doubleface.api.ReplyHandler;

/**
 * A plan that passes every call through with its reply handler wrapped by {@code hook}: how a
 * test (or a user's decorator) observes or changes the per-reply work of a service it wraps.
 */
final class InterceptingPlan<Q, P> implements FanoutPlan<Q, P> {

    /** Runs around one reply handler. */
    interface Hook<Q, P> {
        P onReply(Q request, int call, Object reply, ReplyHandler<Q, Object, P> inner);
    }

    private final FanoutPlan<Q, P> delegate;
    private final Hook<Q, P> hook;

    InterceptingPlan(FanoutPlan<Q, P> delegate, Hook<Q, P> hook) {
        this.delegate = delegate;
        this.hook = hook;
    }

    @Override
    @SuppressWarnings("unchecked")
    public <V, C extends Command<V>> int call(Backend<? super C> backend, int shard, C command,
            ReplyHandler<? super Q, ? super V, ? extends P> onReply) {
        ReplyHandler<Q, Object, P> inner = (q, c, r) -> onReply.onReply(q, c, (V) r);
        ReplyHandler<Q, V, P> wrapped = (q, c, r) -> hook.onReply(q, c, r, inner);
        return delegate.call(backend, shard, command, wrapped);
    }

    @Override
    public <V, C extends Command<V>> int call(Backend<? super C> backend, int shard, C command,
            io.doubleface.api.CallRef<V> ref) {
        return delegate.call(backend, shard, command, ref); // no handler of the service's to intercept
    }

    @Override
    public <V, T, C extends Command<V>> int call(Backend<? super C> backend, int shard, C command,
            io.doubleface.api.CallRef<T> ref, io.doubleface.api.CallHandler<? super Q, ? super V, ? extends T> onReply) {
        return delegate.call(backend, shard, command, ref, onReply);
    }

    @Override
    public void timeout(int call, java.time.Duration timeout) {
        delegate.timeout(call, timeout);
    }

    @Override
    public io.doubleface.api.RequestContext context() {
        return delegate.context();
    }

    @Override
    public void optional(int call) {
        delegate.optional(call);
    }

    @Override
    public void failurePolicy(FailurePolicy policy) {
        delegate.failurePolicy(policy);
    }

    @Override
    public int calls() {
        return delegate.calls();
    }
}
