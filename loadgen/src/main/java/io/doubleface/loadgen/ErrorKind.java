package io.doubleface.loadgen;

/** Why a request failed; {@link #label()} is the key in the JSON summary's {@code errors_by_kind}. */
public enum ErrorKind {
    /** The connection for it could not be opened. */
    CONNECT("connect"),
    /** No complete response within the timeout, counted from the intended send time. */
    TIMEOUT("timeout"),
    /** A 4xx response (its latency is recorded too). */
    STATUS_4XX("status_4xx"),
    /** A 5xx response (its latency is recorded too). */
    STATUS_5XX("status_5xx"),
    /** The connection closed (or the response did not parse) while the request was in flight. */
    CLOSED("closed");

    private final String label;

    ErrorKind(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }
}
