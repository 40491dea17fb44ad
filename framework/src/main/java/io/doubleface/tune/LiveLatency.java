package io.doubleface.tune;

import io.doubleface.model.Configuration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * Live latencies per (configuration, load bucket): what the adapter learns while it runs, to
 * refine (or, without a profile, replace) the profile.
 *
 * <p>Load buckets are logarithmic, {@value #BUCKET_RATIO}× wide ({@link #bucket}). Each cell is a
 * log-linear latency histogram ({@value #SUB_BINS} bins per power of two of microseconds, up to
 * about 2<sup>{@value #OCTAVES}</sup> µs) plus a count of failed requests. Old data fades: when a
 * cell holds more than {@link #capacity()} samples the adapter halves it ({@link #p99}).
 *
 * <p>Threading: {@link #record} from any thread, lock-free (one atomic increment per bin; a cell
 * is allocated once, on its first sample). {@link #p99}, {@link #samples}, {@link #errors} from
 * the adapter thread. Halving races with concurrent increments and may lose a few of them.
 */
final class LiveLatency {

    /** Width of a load bucket: {@value}. */
    static final double BUCKET_RATIO = 1.25;
    /** Load buckets: {@value} (1 QPS .. about 10⁶ QPS). */
    static final int BUCKETS = 64;
    static final int SUB_BINS = 4;
    static final int OCTAVES = 26;
    private static final int BINS = SUB_BINS * OCTAVES;
    private static final int ERRORS = BINS;
    private static final int TOTAL = BINS + 1;

    private final List<Configuration> configs;
    private final AtomicReferenceArray<AtomicLongArray> cells;
    private final int minSamples;

    LiveLatency(List<Configuration> configs, int minSamples) {
        this.configs = List.copyOf(configs);
        this.cells = new AtomicReferenceArray<>(configs.size() * BUCKETS);
        this.minSamples = minSamples;
    }

    /** The bucket of a load (requests per second). */
    static int bucket(double load) {
        if (!(load >= 1)) {
            return 0;
        }
        return (int) Math.min(BUCKETS - 1, Math.floor(Math.log(load) / Math.log(BUCKET_RATIO)));
    }

    /** The lowest load of bucket {@code b}. */
    static double bucketLoad(int b) {
        return Math.pow(BUCKET_RATIO, b);
    }

    int index(Configuration config) {
        return configs.indexOf(config);
    }

    /** Samples a cell keeps before it is halved: 8 × the samples needed. */
    int capacity() {
        return 8 * minSamples;
    }

    /** One answered request of configuration {@code c} (index) in load bucket {@code b}. */
    void record(int c, int b, long latencyNanos, boolean ok) {
        if (c < 0) {
            return;
        }
        int i = c * BUCKETS + b;
        AtomicLongArray cell = cells.get(i);
        if (cell == null) {
            cells.compareAndSet(i, null, new AtomicLongArray(BINS + 2));
            cell = cells.get(i);
        }
        if (ok) {
            cell.incrementAndGet(bin(latencyNanos / 1000));
        } else {
            cell.incrementAndGet(ERRORS);
        }
        cell.incrementAndGet(TOTAL);
    }

    static int bin(long micros) {
        if (micros < 1) {
            return 0;
        }
        int octave = 63 - Long.numberOfLeadingZeros(micros);
        if (octave >= OCTAVES) {
            return BINS - 1;
        }
        int sub = octave == 0 ? 0 : (int) ((micros - (1L << octave)) * SUB_BINS >> octave);
        return octave * SUB_BINS + sub;
    }

    /** The upper latency bound of bin {@code i}, in microseconds. */
    static double binUpper(int i) {
        int octave = i / SUB_BINS;
        int sub = i % SUB_BINS;
        return (1L << octave) * (1 + (sub + 1) / (double) SUB_BINS);
    }

    long samples(int c, int b) {
        AtomicLongArray cell = c < 0 ? null : cells.get(c * BUCKETS + b);
        return cell == null ? 0 : cell.get(TOTAL);
    }

    long errors(int c, int b) {
        AtomicLongArray cell = c < 0 ? null : cells.get(c * BUCKETS + b);
        return cell == null ? 0 : cell.get(ERRORS);
    }

    /**
     * The live p99 in microseconds (upper bound of its bin) of configuration {@code c} at bucket
     * {@code b}, or {@code NaN} with fewer than the minimum samples. Halves a full cell.
     */
    double p99(int c, int b) {
        AtomicLongArray cell = c < 0 ? null : cells.get(c * BUCKETS + b);
        if (cell == null) {
            return Double.NaN;
        }
        long total = cell.get(TOTAL);
        if (total > capacity()) {
            for (int i = 0; i < cell.length(); i++) {
                cell.set(i, cell.get(i) / 2);
            }
            total = cell.get(TOTAL);
        }
        long ok = total - cell.get(ERRORS);
        if (ok < minSamples) {
            return Double.NaN;
        }
        long rank = (long) Math.ceil(ok * 0.99);
        long seen = 0;
        for (int i = 0; i < BINS; i++) {
            seen += cell.get(i);
            if (seen >= rank) {
                return binUpper(i);
            }
        }
        return binUpper(BINS - 1);
    }
}
