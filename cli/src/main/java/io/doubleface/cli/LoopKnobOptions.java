package io.doubleface.cli;

import io.doubleface.driver.FlushMode;
import io.doubleface.internal.engine.StageStats;
import io.doubleface.internal.loop.CpuAffinity;
import io.doubleface.server.FanoutServer;
import java.util.List;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Option;
import picocli.CommandLine.TypeConversionException;

/**
 * The loop knobs every {@code serve} mid-tier takes (a picocli mixin of
 * {@code serve ycsb} and {@link MidTierServeOptions}): {@code --flush-mode} and
 * {@code --pin-io-threads}, both changeable at run time with {@code PUT /admin/knobs}, and the
 * per-stage tracing that measures them, {@code --trace-stages}.
 */
final class LoopKnobOptions {

    @Option(names = {"--flush-mode", "--flush-mode"}, paramLabel = "per-write|per-iteration|batch:N[:Tus]",
            converter = FlushModeConverter.class, defaultValue = "per-iteration",
            description = {"When shard connections of the pipelined drivers (kv, redis native, the YCSB "
                    + "OP_MSG driver) are flushed: once per event-loop iteration (default), per call, or when N "
                    + "calls wait on a connection or T µs after the first (default "
                    + FlushMode.DEFAULT_BATCH_DELAY_MICROS + "), whichever comes first, e.g. batch:16:50us. "
                    + "Change it at run time: PUT /admin/knobs?flush-mode=... (docs/tracing.md, Knobs)."})
    FlushMode flushMode;

    @Option(names = "--pin-io-threads", paramLabel = "CPU_LIST", converter = CpuListConverter.class,
            description = {"Pin I/O loop i (and loop i of a configuration's backend loops or reactors) to the "
                    + "i-th CPU of the list, round robin, e.g. 0,1 or 0-3 (Linux sched_setaffinity). Default: not "
                    + "pinned. Change it at run time: PUT /admin/knobs?pin-io-threads=LIST|off."})
    CpuList pinIoThreads;

    @Option(names = "--trace-stages", paramLabel = "off|all|sampled:N", defaultValue = "off",
            description = "Per-stage service times (queue, plan, round_trip, reply_wait, last_reply, merge, "
                    + "respond, total) of every request (all) or of one in N (sampled:N), per configuration, in "
                    + "/admin/stats under \"stages\" and in /metrics (docs/tracing.md). Change it at run time: "
                    + "PUT /admin/knobs?trace-stages=off|all|sampled:N.")
    String traceStages;

    /** A parsed CPU list (a type of its own so picocli takes the option once, not as a repeatable list). */
    record CpuList(List<Integer> cpus) {}

    /** Sets the knobs on {@code b}. */
    FanoutServer.Builder apply(FanoutServer.Builder b) {
        return b.flushMode(flushMode).pinIoThreads(pinIoThreads == null ? null : pinIoThreads.cpus())
                .traceStages(traceStagesOneIn(traceStages));
    }

    /** {@code off} → 0, {@code all} → 1, {@code sampled:N} → N. */
    static int traceStagesOneIn(String spec) {
        try {
            return StageStats.parseEvery(spec);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--trace-stages: " + e.getMessage());
        }
    }

    /** {@return the banner line of the knobs, or {@code null} when both are at their defaults} */
    static String bannerLine(FanoutServer server) {
        if (server.flushMode().equals(FlushMode.PER_ITERATION) && server.pinnedCpus() == null) {
            return null;
        }
        return "  knobs    flush " + server.flushMode()
                + (server.pinnedCpus() == null ? "" : ", I/O loops pinned to CPUs " + server.pinnedCpus());
    }

    /** Reads {@code --flush-mode}. */
    static final class FlushModeConverter implements ITypeConverter<FlushMode> {
        @Override
        public FlushMode convert(String value) {
            try {
                return FlushMode.parse(value);
            } catch (IllegalArgumentException e) {
                throw new TypeConversionException(e.getMessage());
            }
        }
    }

    /** Reads a CPU list ({@code 0,1}, {@code 0-3}). */
    static final class CpuListConverter implements ITypeConverter<CpuList> {
        @Override
        public CpuList convert(String value) {
            try {
                return new CpuList(CpuAffinity.parseList(value));
            } catch (IllegalArgumentException e) {
                throw new TypeConversionException(e.getMessage());
            }
        }
    }
}
