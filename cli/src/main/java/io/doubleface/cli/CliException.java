package io.doubleface.cli;

/**
 * A command failed for a reason the user can act on (a port in use, a wrong demo response): its
 * message is printed on stderr without a stack trace and the command exits with
 * {@link #exitCode()}.
 */
final class CliException extends RuntimeException {

    private final int exitCode;

    CliException(String message) {
        this(message, DoubleFaceCli.EXIT_FAILURE, null);
    }

    CliException(String message, Throwable cause) {
        this(message, DoubleFaceCli.EXIT_FAILURE, cause);
    }

    CliException(String message, int exitCode, Throwable cause) {
        super(message, cause);
        this.exitCode = exitCode;
    }

    int exitCode() {
        return exitCode;
    }
}
