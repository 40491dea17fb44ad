package io.doubleface.experiments;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * A child process of the experiment runner: started (optionally pinned with {@code taskset -c}),
 * its stdout and stderr copied line by line to a log file and kept in memory for
 * {@link #awaitLine}, and stopped with SIGTERM, then SIGKILL after a grace period.
 */
final class Proc implements AutoCloseable {

    private final String name;
    private final Process process;
    private final List<String> lines = new ArrayList<>();
    private final StringBuilder stdout = new StringBuilder();
    private final Thread pump;
    private final Thread errPump;
    private final PrintWriter log;

    private Proc(String name, Process process, Path log) throws IOException {
        this.name = name;
        this.process = process;
        PrintWriter w = this.log = new PrintWriter(Files.newBufferedWriter(log, StandardCharsets.UTF_8,
                java.nio.file.StandardOpenOption.APPEND), true);
        this.pump = pump(name + "-out", process.getInputStream(), w, true);
        this.errPump = pump(name + "-err", process.getErrorStream(), w, false);
    }

    /**
     * Starts {@code command}, pinned to {@code cpus} with {@code taskset -c} unless it is null.
     *
     * @param log file receiving the process's stdout and stderr
     */
    static Proc start(String name, String cpus, List<String> command, Path log) throws IOException {
        List<String> cmd = new ArrayList<>();
        if (cpus != null) {
            cmd.add("taskset");
            cmd.add("-c");
            cmd.add(cpus);
        }
        cmd.addAll(command);
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().remove("JAVA_TOOL_OPTIONS"); // its banner line would pollute --json output
        // a token meant for a compose topology's mid-tier would make the runner's own mid-tiers refuse its
        // (token-less) PUT /admin/config: they listen on loopback only and need none
        pb.environment().remove("DOUBLEFACE_ADMIN_TOKEN");
        Files.writeString(log, "# " + String.join(" ", cmd) + "\n", StandardCharsets.UTF_8);
        return new Proc(name, pb.start(), log);
    }

    private Thread pump(String threadName, java.io.InputStream in, PrintWriter w, boolean out) {
        Thread t = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    synchronized (this) {
                        lines.add(line);
                        if (out) {
                            stdout.append(line).append('\n');
                        }
                        w.println(line);
                        notifyAll();
                    }
                }
            } catch (IOException e) {
                // process gone
            }
            synchronized (this) {
                notifyAll();
            }
        }, threadName);
        t.setDaemon(true);
        t.start();
        return t;
    }

    long pid() {
        return process.pid();
    }

    String name() {
        return name;
    }

    /**
     * Waits until a line of output matches {@code match} and returns it.
     *
     * @throws IOException if the process exits or the time runs out first (with its last lines)
     */
    synchronized String awaitLine(Predicate<String> match, long timeoutMillis) throws IOException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        int seen = 0;
        while (true) {
            for (; seen < lines.size(); seen++) {
                if (match.test(lines.get(seen))) {
                    return lines.get(seen);
                }
            }
            long left = deadline - System.nanoTime();
            if (!process.isAlive() && !pump.isAlive()) {
                throw new IOException(name + " exited with status " + process.exitValue() + " before it was ready:\n"
                        + tail());
            }
            if (left <= 0) {
                throw new IOException(name + " not ready after " + timeoutMillis + " ms:\n" + tail());
            }
            try {
                wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted", e);
            }
        }
    }

    /** Waits for the process to exit; returns its exit status and everything it wrote to stdout. */
    Exit await(long timeoutMillis) throws IOException {
        try {
            if (!process.waitFor(timeoutMillis, TimeUnit.MILLISECONDS)) {
                close();
                throw new IOException(name + " still running after " + timeoutMillis + " ms; killed:\n" + tail());
            }
            pump.join(5_000);
            errPump.join(5_000);
            log.close();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            close();
            throw new IOException("interrupted", e);
        }
        synchronized (this) {
            return new Exit(process.exitValue(), stdout.toString());
        }
    }

    /** Exit status and stdout of a finished process. */
    record Exit(int status, String stdout) {}

    synchronized String tail() {
        int from = Math.max(0, lines.size() - 15);
        return String.join("\n", lines.subList(from, lines.size()));
    }

    boolean isAlive() {
        return process.isAlive();
    }

    /** SIGTERM, then SIGKILL after 5 s. Idempotent. */
    @Override
    public void close() {
        if (process.isAlive()) {
            process.destroy();
            try {
                if (!process.waitFor(5, TimeUnit.SECONDS)) {
                    process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                process.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
        try {
            pump.join(2_000);
            errPump.join(2_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        synchronized (this) {
            log.close();
        }
    }
}
