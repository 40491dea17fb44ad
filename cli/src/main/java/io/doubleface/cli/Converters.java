package io.doubleface.cli;

import io.doubleface.driver.Transport;
import io.doubleface.driver.Command;
import io.doubleface.driver.spi.Resilience;
import io.doubleface.model.Configuration;
import io.doubleface.sched.ReplyOrder;
import io.doubleface.tune.TuneStrategy;
import io.doubleface.services.ycsb.Size;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * The command line's value types. Each converter turns a bad value into a
 * {@link TypeConversionException}, which picocli reports as a usage error naming the option.
 */
final class Converters {

    private Converters() {}

    private static TypeConversionException bad(IllegalArgumentException e) {
        return new TypeConversionException(e.getMessage());
    }

    /** {@code 250ms}, {@code 1s}, {@code 2m} ({@link Durations}). */
    static final class DurationConverter implements ITypeConverter<Duration> {
        @Override
        public Duration convert(String value) {
            try {
                return Durations.parse(value);
            } catch (IllegalArgumentException e) {
                throw bad(e);
            }
        }
    }

    /** {@code off}, {@code 200}, {@code adaptive}, {@code adaptive:100:20:5000} ({@link io.doubleface.server.Admission#parse}). */
    static final class AdmissionConverter implements ITypeConverter<io.doubleface.server.Admission> {
        @Override
        public io.doubleface.server.Admission convert(String value) {
            try {
                return io.doubleface.server.Admission.parse(value);
            } catch (IllegalArgumentException e) {
                throw bad(e);
            }
        }
    }

    /** {@code off}, {@code circuit:5:1s,retries:1:0.1:10,hedge:20ms:0.05:5} ({@link ResilienceSpecs}). */
    static final class ResilienceConverter implements ITypeConverter<Resilience<Command<?>>> {
        @Override
        public Resilience<Command<?>> convert(String value) {
            try {
                return ResilienceSpecs.parse(value);
            } catch (IllegalArgumentException e) {
                throw bad(e);
            }
        }
    }

    /** {@code 8192}, {@code 8k}, {@code 1m} ({@link ByteSizes}). */
    static final class ByteSizeConverter implements ITypeConverter<Integer> {
        @Override
        public Integer convert(String value) {
            try {
                return ByteSizes.parse(value);
            } catch (IllegalArgumentException e) {
                throw bad(e);
            }
        }
    }

    /** {@code auto}, {@code epoll}, {@code nio}. */
    static final class TransportConverter implements ITypeConverter<Transport> {
        @Override
        public Transport convert(String value) {
            for (Transport t : Transport.values()) {
                if (t.name().equalsIgnoreCase(value)) {
                    return t;
                }
            }
            throw new TypeConversionException("'" + value + "' (expected: auto, epoll or nio)");
        }
    }

    /** A configuration name ({@link Configuration}), returned in canonical form. */
    static final class ConfigurationConverter implements ITypeConverter<String> {
        @Override
        public String convert(String value) {
            TuneStrategy policy = TuneStrategy.byLabel(value);
            if (policy != null) {
                return policy.label(); // the load adapter (serve ycsb)
            }
            try {
                return Configuration.parse(value).name();
            } catch (IllegalArgumentException e) {
                throw bad(e);
            }
        }
    }

    /** A comma-separated list of configuration names, canonical, at least one. */
    static final class ConfigurationListConverter implements ITypeConverter<ConfigurationList> {
        @Override
        public ConfigurationList convert(String value) {
            List<String> names = new ArrayList<>();
            for (String part : value.split(",")) {
                if (part.isBlank()) {
                    continue;
                }
                try {
                    names.add(Configuration.parse(part.strip()).name());
                } catch (IllegalArgumentException e) {
                    throw bad(e);
                }
            }
            if (names.isEmpty()) {
                throw new TypeConversionException("'" + value + "' (expected: configuration names separated by commas, "
                        + "e.g. thread-64,doubleface)");
            }
            return new ConfigurationList(List.copyOf(names));
        }
    }

    /** Canonical configuration names, in order. */
    record ConfigurationList(List<String> names) implements Iterable<String> {
        @Override
        public Iterator<String> iterator() {
            return names.iterator();
        }

        @Override
        public String toString() {
            return String.join(",", names);
        }
    }

    /** {@code completion-first} (alias {@code cf}), {@code completion-first-arrival} ({@code cfa}) or {@code fifo}, returned canonical. */
    static final class PolicyConverter implements ITypeConverter<String> {
        @Override
        public String convert(String value) {
            try {
                return ReplyOrder.create(value).name();
            } catch (IllegalArgumentException e) {
                throw bad(e);
            }
        }
    }

    /** {@code small}, {@code medium}, {@code large}. */
    static final class SizeConverter implements ITypeConverter<Size> {
        @Override
        public Size convert(String value) {
            for (Size s : Size.values()) {
                if (s.label().equals(value.toLowerCase(Locale.ROOT))) {
                    return s;
                }
            }
            throw new TypeConversionException("'" + value + "' (expected: small, medium or large)");
        }
    }
}
