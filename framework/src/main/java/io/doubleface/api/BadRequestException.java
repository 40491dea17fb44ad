package io.doubleface.api;

/**
 * Thrown while decoding an upstream request that is malformed; the upstream answers
 * {@code 400 Bad Request} with {@link #getMessage()} as a short text reason. Cheap: no stack trace.
 */
public final class BadRequestException extends Exception {

    /**
     * Creates the exception.
     *
     * @param reason the short text reason sent with the {@code 400} (or gRPC {@code INVALID_ARGUMENT})
     */
    public BadRequestException(String reason) {
        super(reason, null, false, false);
    }
}
