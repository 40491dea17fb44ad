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
        return "shard " + shard + " " + kind.name().toLowerCase(java.util.Locale.ROOT) + ": " + super.getMessage();
    }

    /** {@return the message without the shard and kind prefix of {@link #getMessage()}} */
    String reason() {
        return super.getMessage();
    }
}
