package io.doubleface.cli;

import io.doubleface.internal.Json;
import io.doubleface.server.FanoutServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Map;

/**
 * {@code serve … --ready-file FILE}: a started server's ports as one JSON object, for programs that
 * start servers (the experiment runner) instead of reading the human banner. Written to a
 * temporary file beside {@code FILE} and renamed into place, so a reader never sees half of it.
 */
public final class ReadyFile {

    private ReadyFile() {}

    /**
     * {@return why {@code file} cannot be written once the server listens, or {@code null}} Checked
     * before the server starts, so a bad path is a usage error, not a server left running.
     */
    static String problem(Path file) {
        Path dir = file.toAbsolutePath().getParent();
        if (dir == null || !Files.isDirectory(dir)) {
            return "--ready-file " + file + ": directory " + dir + " does not exist";
        }
        if (!Files.isWritable(dir)) {
            return "--ready-file " + file + ": directory " + dir + " is not writable";
        }
        return null;
    }

    /** Writes {@code {"port", "admin_port", "grpc_port", "pid"}} of {@code server} to {@code file}. */
    static void write(Path file, FanoutServer server) {
        write(file, new Json().begin().field("port", server.port()).field("admin_port", server.adminPort())
                .field("grpc_port", server.grpcPort()).field("pid", ProcessHandle.current().pid()).end() + "\n");
    }

    /** Writes {@code fields} (string values) and {@code pid} to {@code file}, e.g. the shard URIs of a leaf. */
    static void write(Path file, Map<String, String> fields) {
        Json j = new Json().begin();
        fields.forEach(j::field);
        write(file, j.field("pid", ProcessHandle.current().pid()).end() + "\n");
    }

    private static void write(Path file, String json) {
        Path abs = file.toAbsolutePath();
        Path tmp = abs.resolveSibling(abs.getFileName() + ".tmp");
        try {
            Files.writeString(tmp, json, StandardCharsets.UTF_8);
            Files.move(tmp, abs, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new UncheckedIOException("--ready-file " + file + ": " + e.getMessage(), e);
        }
    }

    /** Reads a ready file: its members by name ({@code port}, {@code admin_port}, …). */
    @SuppressWarnings("unchecked")
    public static Map<String, Object> read(Path file) throws IOException {
        Object v = Json.parse(Files.readString(file, StandardCharsets.UTF_8));
        if (!(v instanceof Map)) {
            throw new IOException(file + ": not a JSON object");
        }
        return (Map<String, Object>) v;
    }
}
