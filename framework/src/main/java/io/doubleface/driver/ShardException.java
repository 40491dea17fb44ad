package io.doubleface.driver;

/**
 * A shard call failed. The {@link Kind} decides the upstream status: {@code TIMEOUT} gives
 * {@code 504}, every other kind {@code 503}. Cheap to create (no stack trace) because failures
 * come in storms when a shard dies.
 */
public final class ShardException extends Exception {

    /** What went wrong. */
    public enum Kind {
        /** Could not connect, or the connection was lost with the call outstanding. */
        UNAVAILABLE,
        /** No reply within the call's time limit. */
        TIMEOUT,
        /** The shard answered with an error (unknown key, bad command, …). */
        SHARD_ERROR,
        /** Too many calls outstanding on the connection; the call was not sent. */
        OVERLOADED,
        /** The client was closed. */
        CLOSED
    }

    /** What went wrong. */
    private final Kind kind;
    /** The shard id, or -1 if not known. */
    private final int shard;
    /** The backend's name when this is the framework's account of a call's failure, else {@code null}. */
    private final String backend;

    /**
     * Creates a failure without a cause.
     *
     * @param kind what went wrong; decides the upstream status
     * @param shard the shard id, or -1 if not known
     * @param message the detail; {@link #getMessage()} prefixes it with the shard and kind
     */
    public ShardException(Kind kind, int shard, String message) {
        super(message, null, false, false);
        this.kind = kind;
        this.shard = shard;
        this.backend = null;
    }

    /**
     * Creates a failure with a cause.
     *
     * @param kind what went wrong; decides the upstream status
     * @param shard the shard id, or -1 if not known
     * @param message the detail; {@link #getMessage()} prefixes it with the shard and kind
     * @param cause the underlying failure, or {@code null}
     */
    public ShardException(Kind kind, int shard, String message, Throwable cause) {
        super(message, cause, false, false);
        this.kind = kind;
        this.shard = shard;
        this.backend = null;
    }

    /**
     * The framework's account of a call's failure, the same whatever the driver or threading model:
     * its message is {@code backend <name>: shard <n> <what>} ({@code unavailable}, {@code timed out},
     * {@code answered an error}, {@code overloaded}, {@code closed}), with the driver's failure, and
     * its text, as the cause. This is what {@link io.doubleface.api.Replies#failure} gives and
     * what the client's error answer says.
     *
     * @param backend the name of the backend the call went to
     * @param cause the driver's failure: its kind and shard are this failure's
     */
    public ShardException(String backend, ShardException cause) {
        super(null, cause, false, false);
        this.kind = cause.kind;
        this.shard = cause.shard;
        this.backend = java.util.Objects.requireNonNull(backend, "backend");
    }

    /**
     * {@return the name of the backend the call went to, for the framework's account of a failure
     * (what {@link io.doubleface.api.Replies#failure} gives), or {@code null} for a driver's own}
     */
    public String backend() {
        return backend;
    }

    /** {@return what went wrong: {@link Kind#TIMEOUT} gives {@code 504}, every other kind {@code 503}} */
    public Kind kind() {
        return kind;
    }

    /** {@return the shard id, or -1 if not known} */
    public int shard() {
        return shard;
    }

    @Override
    public String getMessage() {
        if (backend != null) {
            return "backend " + backend + ": shard " + shard + " " + switch (kind) {
                case UNAVAILABLE -> "unavailable";
                case TIMEOUT -> "timed out";
                case SHARD_ERROR -> "answered an error";
                case OVERLOADED -> "overloaded";
                case CLOSED -> "closed";
            };
        }
        return "shard " + shard + " " + kind.name().toLowerCase(java.util.Locale.ROOT) + ": " + super.getMessage();
    }

    /**
     * {@return the message without the shard and kind prefix of {@link #getMessage()}; for the
     * framework's account of a failure, the driver's}
     */
    public String reason() {
        return backend != null ? ((ShardException) getCause()).reason() : super.getMessage();
    }
}
