package io.doubleface.grpc;

import io.doubleface.driver.spi.ShardGroups;
import io.grpc.EquivalentAddressGroup;
import io.grpc.NameResolver;
import io.grpc.Status;
import io.grpc.SynchronizationContext;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * grpc-java's name resolution for one shard of a {@link GrpcDriver} over replica groups: the
 * channel's addresses are the members of shard {@code shard} in {@link ShardGroups}, published
 * again when they change (checked every {@value #POLL_MILLIS} ms on the channel's timer) and on the
 * channel's own {@code refresh()} (a lost connection), which also asks the groups to resolve again.
 * The channel balances its calls over the members round-robin ({@code round_robin}) and reconnects
 * to each on its own.
 *
 * <p>Threading: grpc-java calls it from the channel's synchronization context; the poll runs there
 * too.
 */
final class GroupNameResolver extends NameResolver {

    /** How often the members are compared with those published: {@value} ms. */
    static final long POLL_MILLIS = 200;

    /** The scheme of the channel targets it resolves: {@value}. */
    static final String SCHEME = "doubleface-group";

    private final ShardGroups groups;
    private final int shard;
    private final ScheduledExecutorService timer;
    private final SynchronizationContext sync;
    private Listener2 listener;
    private long published = -1;
    private ScheduledFuture<?> poll;

    GroupNameResolver(ShardGroups groups, int shard, Args args) {
        this.groups = groups;
        this.shard = shard;
        this.timer = args.getScheduledExecutorService();
        this.sync = args.getSynchronizationContext();
    }

    @Override
    public String getServiceAuthority() {
        return "shard-" + shard;
    }

    @Override
    public void start(Listener2 l) {
        this.listener = l;
        publish(true);
        poll = timer.scheduleWithFixedDelay(() -> sync.execute(() -> publish(false)), POLL_MILLIS, POLL_MILLIS,
                TimeUnit.MILLISECONDS);
    }

    @Override
    public void refresh() {
        groups.refresh("grpc channel of shard " + shard);
        publish(true);
    }

    private void publish(boolean always) {
        if (listener == null) {
            return;
        }
        ShardGroups.Snapshot s = groups.current();
        if (!always && s.version() == published) {
            return;
        }
        published = s.version();
        List<EquivalentAddressGroup> eags = new ArrayList<>();
        for (InetSocketAddress a : s.members().get(shard)) {
            eags.add(new EquivalentAddressGroup(a));
        }
        if (eags.isEmpty()) {
            listener.onError(Status.UNAVAILABLE.withDescription("shard " + shard + " of " + groups.describe()
                    + " has no member right now"));
            return;
        }
        listener.onResult(ResolutionResult.newBuilder().setAddressesOrError(io.grpc.StatusOr.fromValue(eags)).build());
    }

    @Override
    public void shutdown() {
        if (poll != null) {
            poll.cancel(false);
        }
        listener = null;
    }

    /** Makes the resolver of one shard's channel. */
    static final class Factory extends NameResolver.Factory {
        private final ShardGroups groups;
        private final int shard;

        Factory(ShardGroups groups, int shard) {
            this.groups = groups;
            this.shard = shard;
        }

        @Override
        public NameResolver newNameResolver(URI target, Args args) {
            return SCHEME.equals(target.getScheme()) ? new GroupNameResolver(groups, shard, args) : null;
        }

        @Override
        public String getDefaultScheme() {
            return SCHEME;
        }
    }
}
