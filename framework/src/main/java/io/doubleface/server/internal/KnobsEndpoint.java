package io.doubleface.server.internal;

import io.doubleface.driver.FlushMode;
import io.doubleface.internal.engine.StageStats;
import io.doubleface.internal.Json;
import io.doubleface.internal.loop.CpuAffinity;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.QueryStringDecoder;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * {@code /admin/knobs} of the admin listener: the run-time loop knobs (flush mode, CPU pinning).
 *
 * <pre>
 *   GET /admin/knobs                                   {"flush_policy":"per-iteration","pin_io_threads":null}
 *   PUT /admin/knobs?flush-mode=batch:16:50us          (per-write, per-iteration, batch:N[:Tus]; old name: flush-policy)
 *   PUT /admin/knobs?pin-io-threads=0,1                (a CPU list, or off)
 *   PUT /admin/knobs?trace-stages=all                  (off, all, sampled:N: per-stage tracing)
 *   PUT /admin/knobs?reset-stages=true                 (forget the stage figures so far: a new window)
 * </pre>
 *
 * Several parameters may be given in one {@code PUT}; all are parsed before any is applied; the
 * answer is the knobs as they are then. Kept
 * apart from {@link AdminHandler} (which only routes the path here) so each can change alone.
 *
 * <p>Threading: called on the admin loop; the knobs are thread-safe.
 */
public final class KnobsEndpoint {

    /** The path it answers. */
    public static final String PATH = "/admin/knobs";

    /** What a request gets: a status and a body (JSON when OK, text otherwise). */
    record Answer(HttpResponseStatus status, String body) {}

    private final ServerKnobs knobs;

    /**
     * An endpoint over the server's knobs.
     *
     * @param knobs the server's run-time knobs
     */
    public KnobsEndpoint(ServerKnobs knobs) {
        this.knobs = Objects.requireNonNull(knobs, "knobs");
    }

    /** Answers a {@code GET} or {@code PUT} (the caller checked the credential of a {@code PUT}); else {@code null}. */
    Answer handle(HttpMethod m, QueryStringDecoder q) {
        if (HttpMethod.GET.equals(m)) {
            return new Answer(HttpResponseStatus.OK, json());
        }
        if (!HttpMethod.PUT.equals(m)) {
            return null;
        }
        Map<String, List<String>> p;
        try {
            p = q.parameters();
        } catch (IllegalArgumentException e) {
            p = Map.of();
        }
        String flush = single(p, "flush-mode");
        if (flush == null) {
            flush = single(p, "flush-policy"); // its old name
        }
        String pin = single(p, "pin-io-threads");
        String trace = single(p, "trace-stages");
        String reset = single(p, "reset-stages");
        if (flush == null && pin == null && trace == null && reset == null) {
            return new Answer(HttpResponseStatus.BAD_REQUEST, "expected one or more query parameters: "
                    + "flush-mode=per-write|per-iteration|batch:N[:Tus], pin-io-threads=CPU_LIST|off, "
                    + "trace-stages=off|all|sampled:N, reset-stages=true, e.g. PUT " + PATH
                    + "?flush-mode=batch:16:50us\n");
        }
        try {
            // parse all before changing any
            FlushMode f = flush == null ? null : FlushMode.parse(flush);
            List<Integer> cpus = pin == null || pin.equals("off") ? null : CpuAffinity.parseList(pin);
            if (reset != null && !reset.equals("true")) {
                throw new IllegalArgumentException("reset-stages: '" + reset + "' (expected: true)");
            }
            int every = -1;
            if (trace != null) {
                try {
                    every = StageStats.parseEvery(trace);
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException("trace-stages: " + e.getMessage());
                }
            }
            if (f != null) {
                knobs.flushMode(f);
            }
            if (pin != null) {
                knobs.pinIoThreads(cpus);
            }
            if (reset != null) {
                knobs.resetStages();
            }
            if (every >= 0) {
                knobs.traceStages(every);
            }
        } catch (IllegalArgumentException | UnsupportedOperationException e) {
            return new Answer(HttpResponseStatus.BAD_REQUEST, e.getMessage() + "\n");
        }
        return new Answer(HttpResponseStatus.OK, json());
    }

    private static String single(Map<String, List<String>> p, String name) {
        List<String> v = p.get(name);
        return v == null || v.isEmpty() ? null : v.get(v.size() - 1);
    }

    private String json() {
        Json j = new Json().begin();
        j.field("flush_policy", knobs.flushMode().toString());
        j.key("pin_io_threads").tree(knobs.pinnedCpus());
        j.field("trace_stages", StageStats.formatEvery(knobs.traceStages()));
        j.end();
        return j + "\n";
    }
}
