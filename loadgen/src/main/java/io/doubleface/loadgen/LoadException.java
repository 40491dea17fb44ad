package io.doubleface.loadgen;

/** A run could not go ahead: the target is unreachable or its name does not resolve. */
public final class LoadException extends Exception {

    public LoadException(String message, Throwable cause) {
        super(message, cause);
    }
}
