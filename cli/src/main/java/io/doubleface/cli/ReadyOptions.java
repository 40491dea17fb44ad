package io.doubleface.cli;

import io.doubleface.server.FanoutServer;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.concurrent.TimeoutException;
import picocli.CommandLine.Option;

/**
 * {@code --await-ready} of the {@code serve} commands (a picocli mixin): how long to wait, once
 * listening, until every backend's clients have connected to every shard
 * ({@link FanoutServer#awaitReady}), and the banner line that says so.
 */
class ReadyOptions {

    @Option(names = "--await-ready", paramLabel = "DURATION", converter = Converters.DurationConverter.class,
            defaultValue = "10s", description = "Once listening, wait up to this long until every backend is "
                    + "connected on every loop (the admin listener's /ready answers 503 until then), and say so; "
                    + "the server serves meanwhile and after, connected or not. 0s: do not wait.")
    Duration awaitReady;

    /** Waits as {@code --await-ready} says and prints the banner's {@code ready} line. */
    void await(PrintWriter out, FanoutServer server) {
        if (awaitReady.isZero() || awaitReady.isNegative()) {
            out.println("  ready    not awaited (/ready answers 503 until every backend is connected)");
            return;
        }
        try {
            server.awaitReady(awaitReady);
            out.println("  ready    every backend connected");
        } catch (TimeoutException e) {
            out.println("  ready    not yet: " + e.getMessage() + "; serving anyway, /ready answers 503 until connected");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IllegalStateException e) {
            out.println("  ready    no: " + e.getMessage());
        }
        out.flush();
    }
}
