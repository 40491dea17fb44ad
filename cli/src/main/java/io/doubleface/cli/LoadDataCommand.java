package io.doubleface.cli;

import io.doubleface.services.ycsb.RecordStores;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code doubleface load-data URI}: writes the deterministic YCSB dataset into every shard of a
 * store, through {@link RecordStores#load}.
 */
@Command(name = "load-data",
        mixinStandardHelpOptions = true,
        versionProvider = VersionProvider.class,
        sortOptions = false,
        showDefaultValues = true,
        header = "Loads the deterministic YCSB dataset into every shard of a store.",
        description = {
            "Writes records 0..N-1 (10 fields of 100 B each, a function of key and field) into every shard of "
                + "SHARDS, so queries answer byte-identical responses from every store. Prints a progress line; "
                + "exits 0 when every shard holds every record, 1 when a shard cannot be reached or refuses writes.",
            ""},
        footer = {"", "Examples:",
            "  doubleface load-data redis://127.0.0.1:7201-7220 --records 1000",
            "  doubleface load-data mongodb://127.0.0.1:7301-7320 --records 1000",
            "KV leaves generate their records themselves (doubleface leaf kv --records N)."})
final class LoadDataCommand implements Callable<Integer> {

    private final CliEnv env;

    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "SHARDS",
            description = "The store's shard list, e.g. redis://HOST:FIRST-LAST or mongodb://HOST:PORT,HOST:PORT.")
    String shards;

    @Option(names = "--records", paramLabel = "N", description = "Records per shard (keys 0..N-1).")
    long records = 1000;

    LoadDataCommand(CliEnv env) {
        this.env = env;
    }

    @Override
    public Integer call() {
        if (records < 1) {
            throw new ParameterException(spec.commandLine(), "--records: " + records + " (expected: > 0)");
        }
        long t0 = System.nanoTime();
        long[] lastPrint = {t0};
        try {
            RecordStores.load(shards, records, done -> {
                long now = System.nanoTime();
                if (now - lastPrint[0] >= TimeUnit.MILLISECONDS.toNanos(500)) {
                    lastPrint[0] = now;
                    env.err().printf("\rload-data: %,d records written (%.1f s)", done, (now - t0) / 1e9);
                    env.err().flush();
                }
            });
        } catch (UnsupportedOperationException e) {
            throw new CliException(e.getMessage(), e);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage(), e);
        } catch (IllegalStateException e) {
            env.err().println();
            throw new CliException(e.getMessage(), e);
        }
        env.err().print("\r");
        env.out().printf("load-data: %s: %,d records per shard loaded in %.1f s%n", shards, records,
                (System.nanoTime() - t0) / 1e9);
        env.out().flush();
        return DoubleFaceCli.EXIT_OK;
    }
}
