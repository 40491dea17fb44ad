package io.doubleface.cli;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;
import picocli.CommandLine.IVersionProvider;

/**
 * {@code doubleface --version}: the project version (from {@code version.properties}, filtered at
 * build time), the JVM and the OS.
 */
final class VersionProvider implements IVersionProvider {

    /** The project version, or {@code unknown} if the build did not record it. */
    static String version() {
        try (InputStream in = VersionProvider.class.getResourceAsStream("version.properties")) {
            if (in == null) {
                return "unknown";
            }
            Properties p = new Properties();
            p.load(in);
            String v = p.getProperty("version", "unknown");
            return v.startsWith("${") ? "unknown" : v;
        } catch (IOException e) {
            return "unknown";
        }
    }

    @Override
    public String[] getVersion() {
        return new String[] {
            "doubleface " + version(),
            "JVM: " + System.getProperty("java.vm.name") + " " + Runtime.version() + " ("
                    + System.getProperty("java.vendor") + ")",
            "OS: " + System.getProperty("os.name") + " " + System.getProperty("os.arch"),
        };
    }
}
