package io.doubleface.testing;

import java.util.List;
import org.junit.platform.launcher.LauncherSession;
import org.junit.platform.launcher.LauncherSessionListener;

/**
 * The last leak check of a test JVM: when the launcher session closes (after every test class,
 * including their {@code @AfterAll} methods and extensions), forces GC, lets Netty's detector report
 * what was collected unreleased, and fails the run if anything was reported.
 *
 * <p>{@link LeakCheck} checks after each test, but a leak that surfaces later (in an
 * {@code @AfterAll} method, in the shutdown of a server the last test class shared, or in a test
 * class run without the extension) has no later test to fail. Surefire reports the error thrown
 * here as a failure of the forked JVM, so {@code mvn verify} fails.
 *
 * <p>Registered as a {@code LauncherSessionListener} in {@code META-INF/services} of the framework's
 * test-jar; it also initialises {@link LeakCheck} when the session opens, before any test class
 * loads a buffer class.
 */
public final class LeakCheckAtExit implements LauncherSessionListener {

    @Override
    public void launcherSessionOpened(LauncherSession session) {
        try {
            LeakCheck.installed();
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot install the leak check", e);
        }
    }

    @Override
    public void launcherSessionClosed(LauncherSession session) {
        List<String> found;
        try {
            found = LeakCheck.collect();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted during the final leak check", e);
        }
        if (!found.isEmpty()) {
            String report = found.size() + " ByteBuf leak(s) reported after the last test of this JVM:\n"
                    + String.join("\n", found);
            // also on stderr: the runner may print only the error's first line
            System.err.println("LeakCheckAtExit: " + report);
            throw new AssertionError(report);
        }
    }
}
