package io.doubleface.cli;

import io.doubleface.experiments.ExperimentRunner;
import io.doubleface.experiments.ExternalTopology;
import io.doubleface.experiments.ServiceSpec;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

/**
 * The options that point {@code experiment} and {@code train} at a running mid-tier instead of
 * starting one (a picocli mixin): {@code --midtier}, {@code --admin}, {@code --admin-token-file}.
 * {@link #connect} checks them and the mid-tier; {@link #refuse} turns the options that need a
 * process of the runner's own into usage errors.
 */
final class ExternalMidTierOptions {

    /** The environment variable holding the admin token when no file is given (the compose files' and serve's). */
    static final String TOKEN_ENV = "DOUBLEFACE_ADMIN_TOKEN";

    @Option(names = "--midtier", paramLabel = "http://HOST:PORT",
            description = "Run over this running mid-tier (e.g. a docker compose topology's, http://127.0.0.1:8080) "
                + "instead of starting a leaf and mid-tiers: nothing is started but the load generator (here), "
                + "nothing of it is pinned, each configuration is activated with PUT /admin/config (and an "
                + "experiment's +flush=/+pin= variants with PUT /admin/knobs), and the configuration and knobs it had "
                + "are put back at the end. Options and configurations that need a process of the runner's own are refused "
                + "(docs/experiments.md, Over a running mid-tier).")
    String midTier;

    @Option(names = "--admin", paramLabel = "http://HOST:PORT",
            description = "The running mid-tier's admin listener (default: the --midtier host, port "
                + ExternalTopology.DEFAULT_ADMIN_PORT + ", as serve and the compose files have it).")
    String admin;

    @Option(names = "--admin-token-file", paramLabel = "FILE",
            description = "File holding the running mid-tier's admin token (default: $" + TOKEN_ENV + ", as serve "
                + "reads it), sent as Authorization: Bearer; a file keeps it off the command line, which is recorded "
                + "in environment.json.")
    Path adminTokenFile;

    /** Whether {@code --midtier} was given. */
    boolean given() {
        return midTier != null;
    }

    /**
     * Checks the addresses and the token, then the mid-tier itself ({@link ExternalTopology#connect});
     * {@code null} without {@code --midtier}.
     *
     * @throws ParameterException saying what is wrong (also when the mid-tier does not answer or refuses the token)
     */
    ExternalTopology connect(CommandSpec spec, ServiceSpec service) {
        if (midTier == null) {
            if (admin != null || adminTokenFile != null) {
                throw new ParameterException(spec.commandLine(), (admin != null ? "--admin" : "--admin-token-file")
                        + " needs --midtier (the running mid-tier to use)");
            }
            return null;
        }
        try {
            URI mid = ExternalTopology.address("--midtier", midTier);
            URI adm = admin != null ? ExternalTopology.address("--admin", admin) : ExternalTopology.defaultAdmin(mid);
            return ExternalTopology.connect(mid, adm, token(spec), service);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage());
        }
    }

    /**
     * Refuses, with {@code --midtier}, each option of {@code why} that was given: option name → why
     * it needs a process of the runner's own.
     */
    void refuse(CommandSpec spec, Map<String, String> why) {
        if (midTier == null) {
            return;
        }
        for (Map.Entry<String, String> e : why.entrySet()) {
            if (spec.commandLine().getParseResult().hasMatchedOption(e.getKey())) {
                throw new ParameterException(spec.commandLine(), e.getKey() + " cannot be used with --midtier: "
                        + e.getValue());
            }
        }
    }

    /** Refuses, with {@code --midtier}, configurations that need a mid-tier process of their own ({@code +gc=}, …). */
    void refuseConfigs(CommandSpec spec, List<String> configs) {
        if (midTier == null || configs == null) {
            return;
        }
        for (String c : configs) {
            String why = ExperimentRunner.externalRefusal(c);
            if (why != null) {
                throw new ParameterException(spec.commandLine(), "--configs with --midtier: " + why);
            }
        }
    }

    private String token(CommandSpec spec) {
        if (adminTokenFile != null) {
            try {
                String t = Files.readString(adminTokenFile).strip();
                if (t.isEmpty()) {
                    throw new ParameterException(spec.commandLine(), "--admin-token-file: " + adminTokenFile
                            + " is empty");
                }
                return t;
            } catch (IOException e) {
                throw new ParameterException(spec.commandLine(), "--admin-token-file: cannot read " + adminTokenFile
                        + ": " + e.getMessage());
            }
        }
        String env = System.getenv(TOKEN_ENV);
        return env == null || env.isBlank() ? null : env.strip();
    }
}
