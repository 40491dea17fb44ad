package io.doubleface.cli;

import io.doubleface.kv.KvLeafServer;
import io.doubleface.server.FanoutServer;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * One in-process run of the command line with captured stdout/stderr, a manual stop signal, and
 * the servers it started.
 */
final class CliRun {

    final StringWriter out = new StringWriter();
    final StringWriter err = new StringWriter();
    final StopSignal stop = StopSignal.manual();
    final CompletableFuture<FanoutServer> server = new CompletableFuture<>();
    final CompletableFuture<KvLeafServer> leaf = new CompletableFuture<>();
    final CliEnv env = new CliEnv(new PrintWriter(out, true), new PrintWriter(err, true), stop, new CliEnv.Listener() {
        @Override
        public void leafStarted(KvLeafServer l) {
            leaf.complete(l);
        }

        @Override
        public void serving(FanoutServer s) {
            server.complete(s);
        }
    });

    /** Runs {@code args} on this thread and returns the exit code. */
    int run(String... args) {
        return DoubleFaceCli.run(env, args);
    }

    /** Runs {@code args} on a new thread (for long-running commands); the future gives the exit code. */
    CompletableFuture<Integer> start(String... args) {
        CompletableFuture<Integer> exit = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                exit.complete(run(args));
            } catch (Throwable e) {
                exit.completeExceptionally(e);
            } finally {
                // a command that failed before starting its server must not leave the test waiting
                server.completeExceptionally(new IllegalStateException("command ended; stderr:\n" + err));
                leaf.completeExceptionally(new IllegalStateException("command ended; stderr:\n" + err));
            }
        }, "cli-under-test");
        t.setDaemon(true);
        t.start();
        return exit;
    }

    /** Stops a long-running command and returns its exit code. */
    int stopAndAwait(CompletableFuture<Integer> exit) throws Exception {
        stop.stop();
        return exit.get(30, TimeUnit.SECONDS);
    }

    String out() {
        return out.toString();
    }

    String err() {
        return err.toString();
    }
}
