package io.doubleface.driver.spi;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * The open/closed state of a driver and the registries of the clients it opened, so that its
 * {@code close()} closes every one of them, including a client opened while {@code close()} runs.
 *
 * <p>A driver makes one {@code DriverClients}, one {@link Registry} per kind of client (loop clients,
 * blocking clients, ...), and opens a client as {@code registry.add(new Client(...), discard)}: the
 * client is added, then the closed state is read again. A client added before {@link #close()} marked
 * the driver closed is in the set {@code close()} copies and is closed there; one added after is
 * removed again, handed to {@code discard} and refused with {@link IllegalStateException}. So no
 * client outlives the driver, whichever of the two threads runs first.
 *
 * <p>Thread-safe.
 */
public final class DriverClients {

    private final String name;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final List<Registry<?>> registries = new java.util.concurrent.CopyOnWriteArrayList<>();

    /**
     * The state of an open driver.
     *
     * @param name the driver as failure messages name it, e.g. {@code "kv driver kv://h:7101-7104"}
     */
    public DriverClients(String name) {
        this.name = Objects.requireNonNull(name, "name");
    }

    /**
     * A new, empty registry of clients of this driver, one per kind of client.
     *
     * @param <T> the client type
     * @return the registry; {@link #forget} and the closed state cover it
     */
    public <T> Registry<T> registry() {
        Registry<T> r = new Registry<>();
        registries.add(r);
        return r;
    }

    /**
     * Forgets a client in whichever registry holds it, as the client's own {@code close()} tells
     * the driver.
     *
     * @param client the client, registered or not
     */
    public void forget(Object client) {
        for (Registry<?> r : registries) {
            r.clients.remove(client);
        }
    }

    /** {@return whether {@link #close()} was called} */
    public boolean isClosed() {
        return closed.get();
    }

    /**
     * Checks that the driver is open, as a driver does before it opens a client.
     *
     * @throws IllegalStateException naming the driver if it is closed
     */
    public void requireOpen() {
        if (closed.get()) {
            throw closedError();
        }
    }

    /**
     * Marks the driver closed; from now on {@link Registry#add} refuses clients.
     *
     * @return {@code true} the first time only: the caller then closes the clients of its registries
     */
    public boolean close() {
        return closed.compareAndSet(false, true);
    }

    private IllegalStateException closedError() {
        return new IllegalStateException(name + " is closed");
    }

    @Override
    public String toString() {
        return name + (closed.get() ? " (closed)" : "");
    }

    /**
     * Closes each loop client of {@code clients} on its own loop ({@link ShardDrivers#closeOnLoop}),
     * waiting up to {@code wait} for each, forgetting each one closed.
     *
     * @param clients the loop clients
     * @param wait longest to wait for each client's close task
     */
    public static void closeOnLoops(Registry<? extends LoopClient<?>> clients, Duration wait) {
        clients.closeAll(c -> ShardDrivers.closeOnLoop(c, wait));
    }

    /**
     * The clients of one kind that a driver opened and has not seen closed.
     *
     * @param <T> the client type
     */
    public final class Registry<T> {

        private final Set<T> clients = ConcurrentHashMap.newKeySet();

        private Registry() {}

        /**
         * Registers a new client, unless the driver is closed.
         *
         * @param <U> the client's type
         * @param client the client just made
         * @param discard what to do with {@code client} when the driver turns out closed (e.g. close
         *     it); it may run while {@link DriverClients#close()}'s caller closes the same client
         * @return {@code client}
         * @throws IllegalStateException naming the driver if it is closed ({@code client} is then
         *     not registered and {@code discard} has run)
         */
        public <U extends T> U add(U client, Consumer<? super U> discard) {
            Objects.requireNonNull(client, "client");
            if (closed.get()) {
                discard.accept(client);
                throw closedError();
            }
            clients.add(client);
            if (closed.get()) { // lost a race with close(): it may or may not have seen the client
                clients.remove(client);
                discard.accept(client);
                throw closedError();
            }
            return client;
        }

        /**
         * {@link #add(Object, Consumer)} for a client that holds nothing before its first use, so a
         * refused one needs no closing.
         *
         * @param <U> the client's type
         * @param client the client just made
         * @return {@code client}
         * @throws IllegalStateException naming the driver if it is closed
         */
        public <U extends T> U add(U client) {
            return add(client, c -> {});
        }

        /**
         * Forgets a client, as its own {@code close()} tells the driver.
         *
         * @param client the client, registered or not
         */
        public void remove(T client) {
            clients.remove(client);
        }

        /** {@return the clients registered now (a new, unmodifiable list)} */
        public List<T> snapshot() {
            return List.copyOf(clients);
        }

        /**
         * Closes the clients registered now, each with {@code closer}, and forgets each one closed.
         * For a driver's {@code close()}, after {@link DriverClients#close()}.
         *
         * @param closer closes one client
         */
        public void closeAll(Consumer<? super T> closer) {
            for (T c : List.copyOf(clients)) {
                closer.accept(c);
                clients.remove(c); // one by one: a clear() racing an add's resize can miss entries
            }
        }
    }
}
