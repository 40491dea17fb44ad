package io.doubleface.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The {@code doubleface} command line: run KV leaves, run the YCSB mid-tier, and compare the
 * threading models on the embedded default ({@code demo}).
 *
 * <pre>
 *   doubleface demo                      every model on an in-process KV cluster, checked and compared
 *   doubleface serve ycsb [--shards …]   the YCSB mid-tier (embedded KV shards unless --shards)
 *   doubleface leaf kv                   a KV leaf: many shards, one port each
 *   doubleface load --rate R --url PATH  drive an HTTP target: open loop (Poisson) or closed loop
 * </pre>
 *
 * <p>Exit codes: {@value #EXIT_OK} success; {@value #EXIT_FAILURE} failure at run time (a port in
 * use, a wrong response in the demo); {@value #EXIT_USAGE} usage error (unknown option, bad
 * value), reported on stderr in at most three lines: the reason, picocli's "did you mean" when it
 * has one, and {@code Try 'doubleface COMMAND --help'} (no usage dump burying the reason).
 *
 * <p>Output: a command's own output (banners, tables) goes to stdout; logs and errors to stderr.
 */
@Command(name = "doubleface",
        mixinStandardHelpOptions = true,
        versionProvider = VersionProvider.class,
        description = {
            "Mid-tier fanout services on Netty with switchable threading models (thread-per-request, "
                + "Type-1, Type-2a, Type-2b) and the DoubleFace integrated reactor.",
            ""},
        commandListHeading = "%nCommands:%n",
        footer = {"",
            "Start with:  doubleface demo",
            "Options of a command:  doubleface COMMAND [SUBCOMMAND] --help",
            "Exit codes: 0 success, 1 failure at run time, 2 usage error."},
        subcommands = {DemoCommand.class, ServeCommand.class, LeafCommand.class, LoadCommand.class, LoadDataCommand.class,
            ExperimentCommand.class, TrainCommand.class, CallCommand.class,
            CommandLine.HelpCommand.class})
public final class DoubleFaceCli {

    /** Exit code of a successful run: {@value}. */
    public static final int EXIT_OK = 0;
    /** Exit code of a failure at run time: {@value}. */
    public static final int EXIT_FAILURE = 1;
    /** Exit code of a usage error: {@value}. */
    public static final int EXIT_USAGE = 2;

    DoubleFaceCli() {}

    /** Runs the command line and exits the JVM with the command's exit code. */
    public static void main(String[] args) {
        io.doubleface.server.internal.NettyDefaults.apply(); // before any command touches Netty
        System.exit(run(CliEnv.system(), args));
    }

    /** Runs the command line in {@code env} and returns its exit code (for tests and embedding). */
    static int run(CliEnv env, String... args) {
        return commandLine(env).execute(args);
    }

    /** The configured command line: output streams, factory, exit codes, error reporting. */
    static CommandLine commandLine(CliEnv env) {
        CommandLine cl = new CommandLine(new DoubleFaceCli(), new CommandFactory(env));
        cl.setOut(env.out());
        cl.setErr(env.err());
        cl.setUsageHelpAutoWidth(true);
        cl.setExecutionExceptionHandler(DoubleFaceCli::handleExecutionException);
        cl.setParameterExceptionHandler(DoubleFaceCli::handleParameterException);
        return cl;
    }

    /**
     * A usage error: the reason on one line, a suggestion when picocli has one (a misspelt option
     * or command), and where the options are listed. Exit code {@value #EXIT_USAGE}.
     */
    private static int handleParameterException(CommandLine.ParameterException ex, String[] args) {
        CommandLine cl = ex.getCommandLine();
        String command = cl.getCommandSpec().qualifiedName();
        java.io.PrintWriter err = cl.getErr();
        err.println(command + ": " + ex.getMessage());
        if (!cl.getSubcommands().isEmpty() && ex.getMessage().startsWith("Missing required subcommand")) {
            err.println("Commands: " + String.join(", ", cl.getSubcommands().keySet()));
        } else if (ex instanceof CommandLine.UnmatchedArgumentException unmatched) {
            java.util.List<String> suggestions = unmatched.getSuggestions();
            if (!suggestions.isEmpty()) {
                err.println("Did you mean: " + String.join(" or ", suggestions.subList(0, Math.min(3, suggestions.size()))) + "?");
            }
        }
        err.println("Try '" + command + " --help' for the options.");
        err.flush();
        return EXIT_USAGE;
    }

    private static int handleExecutionException(Exception ex, CommandLine cl, CommandLine.ParseResult parsed) {
        String command = cl.getCommandSpec().qualifiedName();
        if (ex instanceof CliException e) {
            cl.getErr().println(command + ": " + e.getMessage());
            return e.exitCode();
        }
        if (ex instanceof IllegalArgumentException) {
            // a value the parser let through but the service rejected (e.g. a configuration that
            // needs more I/O loops than the server has): a usage error
            cl.getErr().println(command + ": " + ex.getMessage());
            cl.getErr().println("Try '" + command + " --help' for the options.");
            return EXIT_USAGE;
        }
        cl.getErr().println(command + ": failed: " + ex);
        ex.printStackTrace(cl.getErr());
        return EXIT_FAILURE;
    }

    /** Creates commands, handing {@link CliEnv} to those whose constructor takes it. */
    private record CommandFactory(CliEnv env) implements CommandLine.IFactory {
        @Override
        public <K> K create(Class<K> cls) throws Exception {
            try {
                return cls.getDeclaredConstructor(CliEnv.class).newInstance(env);
            } catch (NoSuchMethodException e) {
                return CommandLine.defaultFactory().create(cls);
            }
        }
    }
}
