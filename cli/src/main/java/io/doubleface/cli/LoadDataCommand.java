package io.doubleface.cli;

import io.doubleface.services.social.SocialData;
import io.doubleface.services.social.SocialLoader;
import io.doubleface.services.ycsb.RecordStores;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code doubleface load-data URI}: writes the deterministic YCSB dataset into every shard of a
 * store, through {@link RecordStores#load}; {@code doubleface load-data social}: the social graph's
 * seeded data into its Redis and MongoDB shards, through {@link SocialLoader#load}.
 */
@Command(name = "load-data",
        mixinStandardHelpOptions = true,
        versionProvider = VersionProvider.class,
        sortOptions = false,
        showDefaultValues = true,
        header = "Loads the deterministic YCSB dataset into every shard of a store, or the social graph's data.",
        description = {
            "Writes records 0..N-1 (10 fields of 100 B each, a function of key and field) into every shard of "
                + "SHARDS, so queries answer byte-identical responses from every store. Prints a progress line; "
                + "exits 0 when every shard holds every record, 1 when a shard cannot be reached or refuses writes.",
            "",
            "With SHARDS the word social: loads the social graph's seeded data (the same data options as leaf "
                + "social's) into the shards of --redis and --mongo, replacing what they hold: the posts composed "
                + "since are gone.",
            ""},
        footer = {"", "Examples:",
            "  doubleface load-data redis://127.0.0.1:7201-7220 --records 1000",
            "  doubleface load-data mongodb://127.0.0.1:7301-7320 --records 1000",
            "  doubleface load-data social --redis redis://127.0.0.1:7401-7404 --mongo mongodb://127.0.0.1:7501-7504",
            "KV leaves generate their records themselves (doubleface leaf kv --records N)."})
final class LoadDataCommand implements Callable<Integer> {

    private final CliEnv env;

    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "SHARDS",
            description = "The store's shard list, e.g. redis://HOST:FIRST-LAST or mongodb://HOST:PORT,HOST:PORT; "
                    + "or social.")
    String shards;

    @Option(names = "--records", paramLabel = "N", description = "Records per shard (keys 0..N-1).")
    long records = 1000;

    @Option(names = "--redis", paramLabel = "URI", description = "social: the Redis shards (as leaf social printed).")
    String redis;

    @Option(names = "--mongo", paramLabel = "URI", description = "social: the MongoDB shards (as leaf social printed).")
    String mongo;

    @Mixin
    SocialOptions social;

    LoadDataCommand(CliEnv env) {
        this.env = env;
    }

    @Override
    public Integer call() {
        var parsed = spec.commandLine().getParseResult();
        if (shards.equals("social")) {
            if (parsed.hasMatchedOption("--records")) {
                throw new ParameterException(spec.commandLine(), "--records is for a store's records; the social "
                        + "graph's size is --users");
            }
            return loadSocial();
        }
        for (var o : parsed.matchedOptions()) {
            if (!o.longestName().equals("--records") && !o.usageHelp() && !o.versionHelp()) {
                throw new ParameterException(spec.commandLine(), o.longestName() + " is for load-data social");
            }
        }
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

    private int loadSocial() {
        if (redis == null || mongo == null) {
            throw new ParameterException(spec.commandLine(), "load-data social needs --redis URI and --mongo URI "
                    + "(the shard lists leaf social printed)");
        }
        SocialData data = social.data();
        long t0 = System.nanoTime();
        try {
            SocialLoader.load(redis, mongo, data);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage(), e);
        } catch (IllegalStateException e) {
            throw new CliException(e.getMessage(), e);
        }
        env.out().printf("load-data: social: %s loaded in %.1f s%n", data, (System.nanoTime() - t0) / 1e9);
        env.out().flush();
        return DoubleFaceCli.EXIT_OK;
    }
}
