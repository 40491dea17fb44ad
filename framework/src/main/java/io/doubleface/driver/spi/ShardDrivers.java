package io.doubleface.driver.spi;

import io.doubleface.driver.DriverSettings;
import io.doubleface.driver.Command;
import io.doubleface.driver.ShardException;
import io.netty.channel.EventLoop;
import io.netty.channel.IoEventLoop;
import io.netty.channel.epoll.EpollIoHandle;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandle;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.TreeMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Finds the {@link ShardDriverProvider} of a shard URI by its scheme. The providers on the class
 * path are loaded once, with {@link ServiceLoader}.
 */
public final class ShardDrivers {

    private static final Logger log = LoggerFactory.getLogger(ShardDrivers.class);

    private static final Map<String, ShardDriverProvider> BY_SCHEME = load();

    private ShardDrivers() {}

    /**
     * The socket channel class that registers on {@code loop}'s I/O handler: what a driver's loop
     * client gives its {@code Bootstrap} (or its library's) so that its connections run on the
     * server's own loop.
     *
     * @param loop an event loop of the server (e.g. the one {@link ShardDriver#openOn} was given)
     * @return {@code EpollSocketChannel} for an epoll loop, {@code NioSocketChannel} for a NIO loop
     * @throws IllegalArgumentException for any other loop
     */
    public static Class<? extends SocketChannel> socketChannelClass(EventLoop loop) {
        if (loop instanceof IoEventLoop io) {
            if (io.isCompatible(EpollIoHandle.class)) {
                return EpollSocketChannel.class;
            }
            if (io.isCompatible(NioIoHandle.class)) {
                return NioSocketChannel.class;
            }
        }
        throw new IllegalArgumentException("loop: " + loop + " (expected: an epoll or NIO IoEventLoop)");
    }

    /**
     * Checks that the calling thread is {@code loop}'s, as a loop client's methods require.
     *
     * @param loop the client's loop
     * @param method the method called, for the message
     * @throws IllegalStateException if called from another thread
     */
    public static void requireOnLoop(EventLoop loop, String method) {
        if (!loop.inEventLoop()) {
            throw new IllegalStateException(method + " from " + Thread.currentThread().getName()
                    + " (expected: on the client's loop " + loop + ")");
        }
    }

    /**
     * The checks at the start of a loop client's {@code send}: on the client's loop, a shard in
     * range, a command and a listener.
     *
     * @param loop the client's loop
     * @param shard the shard sent to
     * @param shardCount the client's shard count
     * @param command the command sent
     * @param listener the call's listener
     * @throws IllegalStateException if called from another thread
     * @throws IndexOutOfBoundsException if {@code shard} is not in {@code 0 .. shardCount-1}
     * @throws NullPointerException if {@code command} or {@code listener} is {@code null}
     */
    public static void checkSend(EventLoop loop, int shard, int shardCount, Object command, ReplyListener listener) {
        requireOnLoop(loop, "send");
        java.util.Objects.checkIndex(shard, shardCount);
        java.util.Objects.requireNonNull(command, "command");
        java.util.Objects.requireNonNull(listener, "listener");
    }

    /**
     * The start of a loop client's {@code close()}, which does its work on the client's loop: called
     * on another thread, it hands {@code close} to {@code loop} (or, when the loop takes no more
     * tasks, runs {@code ifLoopGone} here: the loop's channels went with it) and returns {@code true};
     * on the loop it returns {@code false} and the caller closes now.
     *
     * @param loop the client's loop
     * @param close the client's {@code close}
     * @param ifLoopGone releases what the client holds off the loop, once the loop is gone
     * @return {@code true} if the calling thread is not {@code loop}'s and the close was handed on
     */
    public static boolean handToLoop(EventLoop loop, Runnable close, Runnable ifLoopGone) {
        if (loop.inEventLoop()) {
            return false;
        }
        try {
            loop.execute(close);
        } catch (RejectedExecutionException e) {
            ifLoopGone.run();
        }
        return true;
    }

    /**
     * The future of several connection attempts ({@link LoopClient#connect()}): completed when
     * every one is, exceptionally as soon as one fails (with that failure).
     *
     * @param attempts the attempts, e.g. one per shard
     * @return a new future
     */
    public static java.util.concurrent.CompletableFuture<Void> allConnected(
            java.util.List<? extends java.util.concurrent.CompletableFuture<?>> attempts) {
        java.util.concurrent.CompletableFuture<Void> all = new java.util.concurrent.CompletableFuture<>();
        java.util.concurrent.atomic.AtomicInteger left = new java.util.concurrent.atomic.AtomicInteger(attempts.size());
        if (attempts.isEmpty()) {
            all.complete(null);
        }
        for (java.util.concurrent.CompletableFuture<?> f : attempts) {
            f.whenComplete((v, e) -> {
                if (e != null) {
                    all.completeExceptionally(unwrap(e));
                } else if (left.decrementAndGet() == 0) {
                    all.complete(null);
                }
            });
        }
        return all;
    }

    /**
     * Waits for a connection attempt ({@link LoopClient#connect()}), for a blocking client's
     * {@link BlockingClient#connect()} made of loop clients.
     *
     * @param attempt the attempt
     * @throws ShardException its failure (a failure of another type becomes {@code UNAVAILABLE}), or
     *     {@code CLOSED} if the thread is interrupted
     */
    public static void join(java.util.concurrent.CompletableFuture<?> attempt) throws ShardException {
        try {
            attempt.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ShardException(ShardException.Kind.CLOSED, -1, "interrupted while connecting");
        } catch (java.util.concurrent.ExecutionException e) {
            Throwable cause = unwrap(e);
            if (cause instanceof ShardException se) {
                throw se;
            }
            throw new ShardException(ShardException.Kind.UNAVAILABLE, -1, "cannot connect: " + cause, cause);
        }
    }

    /** The cause under {@code CompletionException}/{@code ExecutionException} wrappers. */
    private static Throwable unwrap(Throwable e) {
        while ((e instanceof java.util.concurrent.CompletionException
                || e instanceof java.util.concurrent.ExecutionException) && e.getCause() != null) {
            e = e.getCause();
        }
        return e;
    }

    /**
     * Closes a loop client on its own loop, as a driver's {@code close()} does for each client it
     * opened: at once when called on that loop, else as a task on the loop, waiting up to
     * {@code wait} for it (a wait that runs out is logged at WARN).
     *
     * @param client the client to close
     * @param wait longest to wait for the close task
     * @return {@code true} if the client closed on its loop; {@code false} if the loop is shut down
     *     or shutting down (its channels went, or go, with it), the wait ran out, or the calling
     *     thread was interrupted (its interrupt flag is set again)
     */
    public static boolean closeOnLoop(LoopClient<?> client, Duration wait) {
        EventLoop loop = client.loop();
        if (loop.inEventLoop()) {
            client.close();
            return true;
        }
        if (loop.isShuttingDown()) {
            return false;
        }
        try {
            if (loop.submit(client::close).await(wait.toMillis(), TimeUnit.MILLISECONDS)) {
                return true;
            }
            log.warn("{} did not close within {} ms", client, wait.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RejectedExecutionException e) {
            // the loop shut down meanwhile; its channels went with it
        }
        return false;
    }

    /**
     * Hands a reply to a listener, as a loop client does: what the listener throws is logged at WARN
     * and goes no further (a listener's bug must not break the client's loop or its other calls).
     *
     * @param listener the call's listener
     * @param tag the call's tag
     * @param reply the reply; ownership passes to the listener
     */
    public static void deliverReply(ReplyListener listener, int tag, Object reply) {
        try {
            listener.onReply(tag, reply);
        } catch (Throwable t) {
            log.warn("reply listener {} threw", listener, t);
        }
    }

    /**
     * Hands a failure to a listener, logging (not throwing) what the listener throws, as
     * {@link #deliverReply} does.
     *
     * @param listener the call's listener
     * @param tag the call's tag
     * @param cause why the call failed
     */
    public static void deliverFailure(ReplyListener listener, int tag, ShardException cause) {
        try {
            listener.onFailure(tag, cause);
        } catch (Throwable t) {
            log.warn("reply listener {} threw", listener, t);
        }
    }

    private static Map<String, ShardDriverProvider> load() {
        Map<String, ShardDriverProvider> m = new TreeMap<>();
        for (ShardDriverProvider p : ServiceLoader.load(ShardDriverProvider.class, ShardDrivers.class.getClassLoader())) {
            for (String s : p.schemes()) {
                ShardDriverProvider old = m.putIfAbsent(s, p);
                if (old != null && old.getClass() != p.getClass()) {
                    throw new IllegalStateException("scheme " + s + "://" + " claimed by both "
                            + old.getClass().getName() + " and " + p.getClass().getName());
                }
            }
        }
        return m;
    }

    /** {@return the schemes known, sorted, without {@code ://} (a new list)} */
    public static List<String> schemes() {
        return new ArrayList<>(BY_SCHEME.keySet());
    }

    /**
     * {@return the URI forms of every known provider ({@link ShardDriverProvider#usage()}), one per line,
     * for help texts}
     */
    public static List<String> usages() {
        List<String> out = new ArrayList<>();
        for (ShardDriverProvider p : new java.util.LinkedHashSet<>(BY_SCHEME.values())) {
            out.add(p.usage());
        }
        return out;
    }

    /**
     * The provider of {@code uri}'s scheme.
     *
     * @param uri a shard URI, {@code SCHEME://...}; only the scheme is read here
     * @return the provider that claims the scheme
     * @throws IllegalArgumentException naming the known schemes if there is none
     */
    public static ShardDriverProvider provider(String uri) {
        int i = uri == null ? -1 : uri.indexOf("://");
        if (i <= 0) {
            throw new IllegalArgumentException("shard URI: '" + uri + "' (expected: SCHEME://..., SCHEME one of "
                    + schemes() + ")");
        }
        ShardDriverProvider p = BY_SCHEME.get(uri.substring(0, i));
        if (p == null) {
            throw new IllegalArgumentException("shard URI: '" + uri + "': unknown scheme " + uri.substring(0, i)
                    + "://" + " (known: " + schemes() + ")");
        }
        return p;
    }

    /**
     * Opens a driver of {@code uri} with its scheme's provider.
     *
     * @param uri a shard URI, {@code SCHEME://...} (see {@link #usages()})
     * @param settings the store-neutral driver settings
     * @return the open driver; the caller closes it
     * @throws IllegalArgumentException if the scheme is unknown or the provider finds {@code uri} malformed
     */
    public static ShardDriver<?> open(String uri, DriverSettings settings) {
        return provider(uri).open(uri, settings);
    }

    /**
     * A loop client of a driver whose clients run several command families, typed as a client of
     * {@code C} (the client checks every command it is sent).
     *
     * @param <C> the command family to type the client as
     * @param client the client, returned as is (an unchecked cast)
     * @return {@code client}
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    public static <C extends Command<?>> LoopClient<C> narrow(LoopClient<?> client) {
        return (LoopClient) client;
    }

    /**
     * {@link #narrow(LoopClient)} for a blocking client.
     *
     * @param <C> the command family to type the client as
     * @param client the client, returned as is (an unchecked cast)
     * @return {@code client}
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    public static <C extends Command<?>> BlockingClient<C> narrow(BlockingClient<?> client) {
        return (BlockingClient) client;
    }

    /**
     * A blocking client made of {@code client}: each call is handed to {@code client} on its loop and
     * the calling thread waits for the outcome (for {@code callAll}, every call is sent in one loop
     * task and the outcomes are handed to the sink in completion order). A reply that arrives after
     * its caller stopped waiting is released. For a driver whose loop client does the routing (a Redis
     * Cluster's slots, replica groups), so that the thread models run the same code as the loop models.
     *
     * @param <C> the command type
     * @param client a loop client, on a loop that is not one of the calling threads
     * @param onClose run once when the blocking client is closed (after {@code client} is closed)
     * @return a thread-safe blocking client; closing it closes {@code client}
     */
    public static <C extends Command<?>> BlockingClient<C> blockingOver(LoopClient<C> client, Runnable onClose) {
        return new LoopBlockingClient<>(java.util.Objects.requireNonNull(client, "client"),
                java.util.Objects.requireNonNull(onClose, "onClose"));
    }
}
