package io.doubleface.internal.engine;

import io.doubleface.api.Backend;
import io.doubleface.api.CallRef;
import io.doubleface.api.FailurePolicy;
import io.doubleface.driver.ShardException;
import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * The calls of one round of a {@link FanoutExchange} and their outcomes. Reused between rounds. Most
 * rounds call one backend with one handler, so those two are kept once ({@code backend0},
 * {@code handler0}) and per-call arrays exist only once a call differs; a round's first call is
 * kept in fields too ({@code shard0}, {@code command0}), so a round of one call has no shard or
 * command array.
 *
 * <p>Not thread-safe by itself: the exchange says which thread may touch what (its class comment);
 * the slots' {@code status} bytes are read and written through its {@code VarHandle}.
 */
final class Round {

    // the status of a call's slot
    static final byte PENDING = 0;
    static final byte OK = 1;
    static final byte FAILED = 2;
    static final byte RELEASED = 3; // OK, and its reference-counted processed reply released
    static final byte CLAIMED = 4; // a round with call time limits: the call's outcome is being taken
    static final byte TAKEN = 5; // OK, and its processed reply handed over by merge (Replies#take): never released here

    /** {@return whether a slot of this status holds a reply (OK, or OK and taken by merge)} */
    static boolean ok(byte status) {
        return status == OK || status == TAKEN;
    }

    int calls;
    Backend<?> backend0;
    Object handler0; // a ReplyHandler, a CallHandler, or RAW
    CallRef<?> ref0;
    Backend<?>[] backends; // null while every call is on backend0
    Object[] handlers; // null while every call has handler0
    CallRef<?>[] refs; // null while every call has ref0
    int shard0; // the first call's, while shards is null
    Object command0;
    int[] shards; // null until a second call (then kept for the rounds that reuse this one)
    Object[] commands;
    // per call, while some call is optional or has a time limit (else null): bit 0 optional, the
    // other bits the time limit in nanoseconds (0: none). A round with time limits claims each
    // call's one outcome (its reply, its failure or its limit) with a CAS of its status to CLAIMED.
    long[] extras;
    boolean limited;
    Object[] processed;
    byte[] status;
    ShardException[] failures;
    int failed;

    /** How many calls fit before the per-call arrays grow. */
    int capacity() {
        return shards == null ? 1 : shards.length;
    }

    int shard(int call) {
        return shards == null ? shard0 : shards[call];
    }

    Object command(int call) {
        return commands == null ? command0 : commands[call];
    }

    void add(Backend<?> backend, int shard, Object command, Object handler, CallRef<?> ref) {
        int n = calls;
        if (shards == null) {
            if (n == 0) {
                backend0 = backend;
                handler0 = handler;
                ref0 = ref;
                shard0 = shard;
                command0 = command;
                calls = 1;
                return;
            }
            shards = new int[8];
            commands = new Object[8];
            shards[0] = shard0;
            commands[0] = command0;
            command0 = null;
            if (extras != null) {
                extras = Arrays.copyOf(extras, 8);
            }
        } else if (n == shards.length) {
            shards = Arrays.copyOf(shards, n * 2);
            commands = Arrays.copyOf(commands, n * 2);
            if (backends != null) {
                backends = Arrays.copyOf(backends, n * 2);
            }
            if (handlers != null) {
                handlers = Arrays.copyOf(handlers, n * 2);
            }
            if (refs != null) {
                refs = Arrays.copyOf(refs, n * 2);
            }
            if (extras != null) {
                extras = Arrays.copyOf(extras, n * 2);
            }
        }
        if (n == 0) {
            backend0 = backend;
            handler0 = handler;
            ref0 = ref;
        }
        if (backends != null) {
            backends[n] = backend;
        } else if (backend != backend0) {
            backends = new Backend<?>[shards.length];
            Arrays.fill(backends, 0, n, backend0);
            backends[n] = backend;
        }
        if (handlers != null) {
            handlers[n] = handler;
        } else if (handler != handler0) {
            handlers = new Object[shards.length];
            Arrays.fill(handlers, 0, n, handler0);
            handlers[n] = handler;
        }
        if (refs != null) {
            refs[n] = ref;
        } else if (ref != ref0) {
            refs = new CallRef<?>[shards.length];
            Arrays.fill(refs, 0, n, ref0);
            refs[n] = ref;
        }
        shards[n] = shard;
        commands[n] = command;
        calls = n + 1;
    }

    Backend<?> backend(int call) {
        return backends == null ? backend0 : backends[call];
    }

    Object handler(int call) {
        return handlers == null ? handler0 : handlers[call];
    }

    CallRef<?> ref(int call) {
        return refs == null ? ref0 : refs[call];
    }

    void open(FailurePolicy policy) {
        processed = new Object[calls];
        status = new byte[calls];
        failures = !policy.isFailFast() || hasOptional() ? new ShardException[calls] : null;
        failed = 0;
    }

    boolean isOptional(int call) {
        return extras != null && (extras[call] & 1) != 0;
    }

    boolean hasOptional() {
        if (extras != null) {
            for (int i = 0; i < calls; i++) {
                if ((extras[i] & 1) != 0) {
                    return true;
                }
            }
        }
        return false;
    }

    /** Call {@code call}'s time limit in nanoseconds, 0 for none. */
    long limit(int call) {
        return extras == null ? 0 : extras[call] >>> 1;
    }

    void clear() {
        if (commands != null) {
            Arrays.fill(commands, 0, calls, null);
        }
        command0 = null;
        backend0 = null;
        handler0 = null;
        ref0 = null;
        backends = null;
        handlers = null;
        refs = null;
        extras = null;
        limited = false;
        processed = null;
        status = null;
        failures = null;
        calls = 0;
    }

    /** Makes call {@code call} optional (bit 0 of its extras). */
    void optional(int call) {
        if (extras == null) {
            extras = new long[capacity()];
        }
        extras[call] |= 1;
    }

    /** Gives call {@code call} a time limit of {@code nanos} (positive, below {@code 2^62}). */
    void timeout(int call, long nanos) {
        if (extras == null) {
            extras = new long[capacity()];
        }
        extras[call] = (extras[call] & 1) | (nanos << 1);
        limited = true;
    }

    /**
     * Why call {@code call} of a merged round has no reply: its recorded failure, else a timeout at
     * the request deadline of {@code deadlineNanos}; {@code null} if it succeeded.
     */
    ShardException failure(int call, long deadlineNanos) {
        Objects.checkIndex(call, calls);
        if (ok(status[call])) {
            return null;
        }
        ShardException e = failures == null ? null : failures[call];
        if (e != null) {
            return e;
        }
        Backend<?> b = backend(call);
        ShardException late = new ShardException(ShardException.Kind.TIMEOUT, shard(call),
                "no reply by the request deadline of " + TimeUnit.NANOSECONDS.toMillis(deadlineNanos) + " ms");
        return b == null ? late : new ShardException(b.name(), late);
    }

    /** The first call planned with {@code ref}, or -1: one pass, no allocation. */
    int indexOf(CallRef<?> ref) {
        if (refs == null) {
            return calls > 0 && ref0 == ref ? 0 : -1;
        }
        for (int i = 0; i < calls; i++) {
            if (refs[i] == ref) {
                return i;
            }
        }
        return -1;
    }
}
