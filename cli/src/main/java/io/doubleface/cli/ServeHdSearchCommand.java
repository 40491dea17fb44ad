package io.doubleface.cli;

import io.doubleface.services.hdsearch.HdSearchData;
import io.doubleface.services.hdsearch.HdSearchService;
import io.doubleface.services.hdsearch.LshIndex;
import io.doubleface.services.hdsearch.v1.HdSearchGrpc;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code doubleface serve hdsearch}: the HDSearch mid-tier ({@link HdSearchService}) over HDSearch leaves. */
@Command(name = "hdsearch",
        mixinStandardHelpOptions = true,
        versionProvider = VersionProvider.class,
        sortOptions = false,
        showDefaultValues = true,
        header = "Runs the HDSearch mid-tier (GET /hdsearch?query=J&k=K): k-NN search with LSH over gRPC leaves.",
        description = {
            "Builds the LSH tables over the seeded corpus (the same --points/--dims/--clusters/--seed as the "
                + "leaves'), then for each query sends every leaf its own LSH candidates and merges the leaves' "
                + "k nearest. A leaf that fails is left out and listed in missing_leaves; no leaf at all is 503. "
                + "See docs/services.md.",
            ""},
        footer = {"", "Example:", "  doubleface leaf hdsearch --leaves 4 --base-port 7601",
            "  doubleface serve hdsearch --leaves grpc://127.0.0.1:7601-7604 --grpc-port 8081",
            "  curl 'http://127.0.0.1:8080/hdsearch?query=7&k=5'"})
final class ServeHdSearchCommand implements Callable<Integer> {

    private final CliEnv env;

    @Mixin
    MuSuiteServeOptions serve;

    @Mixin
    HdSearchOptions data;

    @Option(names = "--lsh-tables", paramLabel = "N", description = "LSH tables.")
    int tables = LshIndex.DEFAULT_TABLES;

    @Option(names = "--lsh-bits", paramLabel = "N", description = "Hash bits (hyperplanes) per LSH table.")
    int bits = LshIndex.DEFAULT_BITS;

    @Option(names = "--lsh-seed", paramLabel = "N", description = "Seed of the LSH hyperplanes.")
    long lshSeed = LshIndex.DEFAULT_SEED;

    ServeHdSearchCommand(CliEnv env) {
        this.env = env;
    }

    @Override
    public Integer call() {
        HdSearchData d = data.data();
        return serve.run(env, "hdsearch", (b, leaves, grpc) -> {
            HdSearchService.install(b, leaves, d, LshIndex.build(d, tables, bits, lshSeed), grpc);
            return d + ", " + tables + " LSH tables x " + bits + " bits";
        }, HdSearchService.PATH + "?query=7&k=5", HdSearchGrpc.getSearchMethod().getFullMethodName());
    }
}
