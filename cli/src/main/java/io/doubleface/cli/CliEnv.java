package io.doubleface.cli;

import io.doubleface.kv.KvLeafServer;
import io.doubleface.mongo.MongoLeafServer;
import io.doubleface.server.FanoutServer;
import java.io.PrintWriter;
import java.nio.charset.Charset;

/**
 * What one run of the command line talks to: its output streams, the {@link StopSignal} that ends
 * long-running commands, and a {@link Listener} told when servers are up (tests use it to learn
 * ephemeral ports and to stop the command).
 *
 * @param out the commands' own output (banners, tables)
 * @param err errors and usage messages
 * @param stop ends {@code serve} and {@code leaf}
 * @param listener told about started servers
 */
record CliEnv(PrintWriter out, PrintWriter err, StopSignal stop, Listener listener) {

    /** Told when a long-running command's servers are up. Called on the command's thread. */
    interface Listener {
        /** A KV leaf is listening. */
        default void leafStarted(KvLeafServer leaf) {}

        /** Embedded MongoDB shards are listening. */
        default void mongoLeafStarted(MongoLeafServer leaf) {}

        /** A mid-tier is listening. */
        default void serving(FanoutServer server) {}
    }

    /** The process's stdout and stderr; long-running commands stop on SIGINT/SIGTERM. */
    static CliEnv system() {
        Charset cs = System.out.charset();
        return new CliEnv(new PrintWriter(new java.io.OutputStreamWriter(System.out, cs), true),
                new PrintWriter(new java.io.OutputStreamWriter(System.err, System.err.charset()), true),
                StopSignal.onJvmShutdown(), new Listener() {});
    }
}
