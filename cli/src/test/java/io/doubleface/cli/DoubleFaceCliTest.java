package io.doubleface.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Parsing, help, version and exit codes of the command line (no servers started). */
class DoubleFaceCliTest {

    @Test
    void helpListsEveryCommand() {
        CliRun r = new CliRun();
        assertEquals(0, r.run("--help"));
        for (String command : new String[] {"demo", "serve", "leaf", "load", "help"}) {
            assertTrue(r.out().contains("\n  " + command + " "), () -> command + " missing from:\n" + r.out());
        }
        assertEquals("", r.err());
    }

    @Test
    void everyCommandHasHelpAndEveryOptionADescription() {
        for (String[] command : new String[][] {{"demo"}, {"serve"}, {"serve", "ycsb"}, {"leaf"}, {"leaf", "kv"}, {"load"}}) {
            CliRun r = new CliRun();
            String[] args = java.util.Arrays.copyOf(command, command.length + 1);
            args[command.length] = "--help";
            assertEquals(0, r.run(args), String.join(" ", args));
            assertTrue(r.out().contains("Usage: doubleface " + String.join(" ", command)), r.out());
        }
        picocli.CommandLine cl = DoubleFaceCli.commandLine(new CliRun().env);
        assertDescribed(cl);
    }

    private static void assertDescribed(picocli.CommandLine cl) {
        var spec = cl.getCommandSpec();
        assertTrue(spec.usageMessage().header().length > 0 || spec.usageMessage().description().length > 0,
                () -> spec.qualifiedName() + " has no description");
        for (var option : spec.options()) {
            assertTrue(option.description().length > 0 && !option.description()[0].isBlank(),
                    () -> spec.qualifiedName() + " " + option.longestName() + " has no description");
        }
        cl.getSubcommands().values().forEach(DoubleFaceCliTest::assertDescribed);
    }

    @Test
    void versionPrintsTheProjectVersion() {
        CliRun r = new CliRun();
        assertEquals(0, r.run("--version"));
        assertTrue(r.out().startsWith("doubleface "), r.out());
        assertTrue(!r.out().startsWith("doubleface unknown") && !r.out().contains("${"), r.out());
    }

    @Test
    void unknownOptionIsAUsageErrorInAtMostThreeLinesWithAHint() {
        CliRun r = new CliRun();
        assertEquals(2, r.run("serve", "ycsb", "--bogus"));
        assertTrue(r.err().startsWith("doubleface serve ycsb: Unknown option: '--bogus'"), r.err());
        assertTrue(r.err().contains("Try 'doubleface serve ycsb --help' for the options."), r.err());
        assertTrue(r.err().lines().count() <= 3, r.err());
        assertTrue(!r.err().contains("Usage:"), r.err());
        assertEquals("", r.out());

        CliRun demo = new CliRun();
        assertEquals(2, demo.run("demo", "--bogus"));
        assertTrue(demo.err().lines().count() <= 3, demo.err());
        assertTrue(demo.err().contains("Try 'doubleface demo --help'"), demo.err());
    }

    @Test
    void aMisspeltOptionGetsASuggestion() {
        CliRun r = new CliRun();
        assertEquals(2, r.run("demo", "--quik"));
        assertTrue(r.err().contains("Did you mean: --quick?"), r.err());
        assertTrue(r.err().lines().count() <= 3, r.err());
    }

    @Test
    void missingSubcommandIsAUsageError() {
        CliRun r = new CliRun();
        assertEquals(2, r.run("serve"));
        assertTrue(r.err().contains("Missing required subcommand"), r.err());
        assertTrue(r.err().contains("ycsb"), r.err());
    }

    @Test
    void badDurationNamesTheOptionAndTheExpectedForm() {
        CliRun r = new CliRun();
        assertEquals(2, r.run("serve", "ycsb", "--deadline", "5x"));
        assertTrue(r.err().contains("--deadline"), r.err());
        assertTrue(r.err().contains("250ms, 1s, 2m"), r.err());
    }

    @Test
    void badConfigurationNameIsAUsageError() {
        CliRun r = new CliRun();
        assertEquals(2, r.run("serve", "ycsb", "--config", "type3"));
        assertTrue(r.err().contains("unknown model 'type3'"), r.err());
    }

    @Test
    void badValuesOfOtherTypesAreUsageErrors() {
        String[][] cases = {
            {"demo", "--size", "huge"},
            {"demo", "--configs", "doubleface,nope"},
            {"demo", "--requests", "0"},
            {"demo", "--fanout", "21"},
            {"serve", "ycsb", "--policy", "lifo"},
            {"serve", "ycsb", "--transport", "uring"},
            {"serve", "ycsb", "--max-header-size", "lots"},
            {"serve", "ycsb", "--port", "70000"},
            {"serve", "ycsb", "--shards", "nosuch://x:1"},
            {"serve", "ycsb", "--shards", "redis://"},
            {"leaf", "kv", "--shards", "0"},
        };
        for (String[] args : cases) {
            CliRun r = new CliRun();
            assertEquals(2, r.run(args), () -> String.join(" ", args) + "\nstderr: " + r.err());
            assertTrue(!r.err().isBlank(), () -> String.join(" ", args) + ": no message");
        }
    }

    @Test
    void helpCommandShowsACommandsUsage() {
        CliRun r = new CliRun();
        assertEquals(0, r.run("help", "demo"));
        assertTrue(r.out().contains("--requests"), r.out());
    }
}
