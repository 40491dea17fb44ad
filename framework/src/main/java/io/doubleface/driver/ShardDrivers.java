package io.doubleface.driver;

import io.doubleface.api.Command;
import io.netty.channel.EventLoop;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Finds the {@link ShardDriverProvider} of a shard URI by its scheme. The providers on the class
 * path are loaded once, with {@link ServiceLoader}.
 */
public final class ShardDrivers {

    private static final Map<String, ShardDriverProvider> BY_SCHEME = load();

    private ShardDrivers() {}

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
     * {@code driver} seen as a driver of another command family {@code C}, for drivers whose
     * clients run several families (each client checks every command it is sent): same shards,
     * same clients, closing the view closes {@code driver}.
     *
     * @param <C> the command family of the view
     * @param driver the driver viewed; its shard count, description and {@code close} are used
     * @param openOn opens a client of {@code driver} on a loop
     * @param openBlocking opens a blocking client of {@code driver}
     * @return the view, a new object on each call
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    public static <C extends Command<?>> ShardDriver<C> view(ShardDriver<?> driver,
            Function<EventLoop, LoopClient<?>> openOn, Supplier<BlockingClient<?>> openBlocking) {
        return new ShardDriver<>() {
            @Override
            public int shardCount() {
                return driver.shardCount();
            }

            @Override
            public String describe() {
                return driver.describe();
            }

            @Override
            public LoopClient<C> openOn(EventLoop loop) {
                return (LoopClient) openOn.apply(loop);
            }

            @Override
            public BlockingClient<C> openBlocking() {
                return (BlockingClient) openBlocking.get();
            }

            @Override
            public void close() {
                driver.close();
            }

            @Override
            public String toString() {
                return driver.toString();
            }
        };
    }
}
