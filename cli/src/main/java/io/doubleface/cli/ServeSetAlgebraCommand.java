package io.doubleface.cli;

import io.doubleface.services.setalgebra.SetAlgebraData;
import io.doubleface.services.setalgebra.SetAlgebraService;
import io.doubleface.services.setalgebra.v1.SetAlgebraGrpc;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code doubleface serve setalgebra}: the Set Algebra mid-tier ({@link SetAlgebraService}). */
@Command(name = "setalgebra",
        mixinStandardHelpOptions = true,
        versionProvider = VersionProvider.class,
        sortOptions = false,
        showDefaultValues = true,
        header = "Runs the Set Algebra mid-tier (GET /setalgebra?terms=w1,w2 or ?query=J): posting-list "
            + "intersection over gRPC leaves.",
        description = {
            "Removes the query's stop words (the same corpus options as the leaves'), asks every leaf for the "
                + "intersection of the terms' posting lists and unions the leaves' sorted document ids. A leaf that "
                + "fails is left out and listed in missing_leaves; no leaf at all is 503. See docs/services.md.",
            ""},
        footer = {"", "Example:", "  doubleface leaf setalgebra --leaves 4 --base-port 7801",
            "  doubleface serve setalgebra --leaves grpc://127.0.0.1:7801-7804 --grpc-port 8081",
            "  curl 'http://127.0.0.1:8080/setalgebra?terms=w150,w400&limit=10'"})
final class ServeSetAlgebraCommand implements Callable<Integer> {

    private final CliEnv env;

    @Mixin
    MuSuiteServeOptions serve;

    @Mixin
    SetAlgebraOptions corpus;

    ServeSetAlgebraCommand(CliEnv env) {
        this.env = env;
    }

    @Override
    public Integer call() {
        SetAlgebraData data = corpus.data();
        return serve.run(env, "setalgebra", (b, leaves, grpc) -> {
            SetAlgebraService.install(b, leaves, data, grpc);
            return data.toString();
        }, SetAlgebraService.PATH + "?query=7&limit=10", SetAlgebraGrpc.getSearchMethod().getFullMethodName());
    }
}
