package io.doubleface.server.internal.tools;

import io.doubleface.engine.FanoutEngine;
import io.doubleface.loop.LoopGroup;
import io.doubleface.server.FanoutServer;
import io.doubleface.tune.LoadAdapter;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.Objects;

/**
 * The parts of a {@link FanoutServer} that its public API does not hand out: the engine, the load
 * adapter and the I/O loops. For doubleface's own tools (the CLI, the experiment runner) and tests;
 * <b>not API, may change in any release</b>. What a user's code needs of them has a public method on
 * {@code FanoutServer} ({@code configuration()}, {@code ioThreads()}, {@code transport()},
 * {@code statsJson()}).
 *
 * <p>Why a class of its own: the server's accessors are package-private so that its public API
 * names no internal type (japicmp checks {@code io.doubleface.server}); this class reaches them by a
 * private lookup. It lives in a package of its own, above {@code io.doubleface.server}, because
 * {@code server.internal} sits below the server (the framework's packages have no cycles).
 *
 * <p>Threading: the methods may be called from any thread; what they return says its own rules.
 */
public final class ServerInternals {

    private static final MethodHandle ENGINE;
    private static final MethodHandle ADAPTER;
    private static final MethodHandle IO_LOOPS;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.privateLookupIn(FanoutServer.class, MethodHandles.lookup());
            ENGINE = lookup.findVirtual(FanoutServer.class, "engine", MethodType.methodType(FanoutEngine.class));
            ADAPTER = lookup.findVirtual(FanoutServer.class, "adapter", MethodType.methodType(LoadAdapter.class));
            IO_LOOPS = lookup.findVirtual(FanoutServer.class, "ioLoops", MethodType.methodType(LoopGroup.class));
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private ServerInternals() {
    }

    /** {@return the engine that admits and runs {@code server}'s requests} */
    public static FanoutEngine engine(FanoutServer server) {
        return (FanoutEngine) get(ENGINE, server);
    }

    /** {@return {@code server}'s load adapter, or {@code null} if it runs a static configuration} */
    public static LoadAdapter adapter(FanoutServer server) {
        return (LoadAdapter) get(ADAPTER, server);
    }

    /** {@return {@code server}'s I/O loops (owned by the server: do not close them)} */
    public static LoopGroup ioLoops(FanoutServer server) {
        return (LoopGroup) get(IO_LOOPS, server);
    }

    /** Calls one of the server's accessors: plain getters, so anything they throw is unchecked. */
    private static Object get(MethodHandle accessor, FanoutServer server) {
        Objects.requireNonNull(server, "server");
        try {
            return accessor.invoke(server);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }
}
