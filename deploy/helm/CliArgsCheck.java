import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonParser;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine;

/**
 * Parses each rendered container's arguments with the doubleface CLI's own command line (picocli,
 * its options, converters and required options) without running the command: an option the
 * chart passes that the CLI does not have, or a value it does not take (a duration, a number),
 * fails here. Checks done in a command's body (port ranges, option pairs) are not run.
 *
 * <p>Usage: {@code java -cp doubleface.jar CliArgsCheck.java FILE}, FILE holding one JSON array of
 * arguments per line, preceded by a label and a tab. Exit 0 when every line parses, 1 otherwise.
 */
public final class CliArgsCheck {

    public static void main(String[] a) throws Exception {
        Class<?> cli = Class.forName("io.doubleface.cli.DoubleFaceCli");
        Class<?> envClass = Class.forName("io.doubleface.cli.CliEnv");
        Method system = envClass.getDeclaredMethod("system");
        system.setAccessible(true);
        Method commandLine = cli.getDeclaredMethod("commandLine", envClass);
        commandLine.setAccessible(true);
        int failed = 0;
        int checked = 0;
        for (String line : Files.readAllLines(Path.of(a[0]))) {
            if (line.isBlank()) {
                continue;
            }
            int tab = line.indexOf('\t');
            String label = line.substring(0, tab);
            JsonArray json = JsonParser.parseString(line.substring(tab + 1)).getAsJsonArray();
            List<String> args = new ArrayList<>();
            for (JsonElement e : json) {
                args.add(e.getAsString());
            }
            CommandLine cl = (CommandLine) commandLine.invoke(null, system.invoke(null));
            checked++;
            try {
                cl.parseArgs(args.toArray(String[]::new));
                System.out.println("ok   " + label + ": doubleface " + String.join(" ", args.subList(0, Math.min(2, args.size()))));
            } catch (CommandLine.ParameterException e) {
                failed++;
                System.out.println("FAIL " + label + ": doubleface " + String.join(" ", args) + "\n     " + e.getMessage());
            }
        }
        System.out.println("CLI arguments: " + (checked - failed) + " of " + checked + " parsed by the doubleface CLI");
        System.exit(failed == 0 && checked > 0 ? 0 : 1);
    }
}
