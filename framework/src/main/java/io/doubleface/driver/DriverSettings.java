package io.doubleface.driver;

import java.time.Duration;
import java.util.Objects;

/**
 * Store-neutral settings every driver honours, given by the server or CLI when it opens a driver
 * through {@link io.doubleface.driver.spi.ShardDrivers}.
 *
 * @param connectTimeout longest a connection attempt may take
 * @param callTimeout longest one shard call may take before it fails with
 *     {@link ShardException.Kind#TIMEOUT}
 * @param maxOutstanding most calls queued or in flight per connection; beyond it calls fail at
 *     once with {@link ShardException.Kind#OVERLOADED} (no unbounded queues)
 */
public record DriverSettings(Duration connectTimeout, Duration callTimeout, int maxOutstanding) {

    /** Default connect timeout: {@value} ms. */
    public static final long DEFAULT_CONNECT_TIMEOUT_MILLIS = 1_000;
    /** Default call timeout: {@value} ms. */
    public static final long DEFAULT_CALL_TIMEOUT_MILLIS = 1_000;
    /** Default most outstanding calls per connection: {@value}. */
    public static final int DEFAULT_MAX_OUTSTANDING = 4096;

    /** The defaults. */
    public static final DriverSettings DEFAULT = new DriverSettings(Duration.ofMillis(DEFAULT_CONNECT_TIMEOUT_MILLIS),
            Duration.ofMillis(DEFAULT_CALL_TIMEOUT_MILLIS), DEFAULT_MAX_OUTSTANDING);

    /**
     * Checks the components.
     *
     * @throws NullPointerException if a timeout is {@code null}
     * @throws IllegalArgumentException if a timeout is not positive, or {@code maxOutstanding} is
     *     {@code < 1}
     */
    public DriverSettings {
        positive("connectTimeout", connectTimeout);
        positive("callTimeout", callTimeout);
        if (maxOutstanding < 1) {
            throw new IllegalArgumentException("maxOutstanding: " + maxOutstanding + " (expected: > 0)");
        }
    }

    private static void positive(String name, Duration d) {
        Objects.requireNonNull(d, name);
        if (d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(name + ": " + d + " (expected: > 0)");
        }
    }

    /**
     * These settings with another connect timeout.
     *
     * @param d the connect timeout, {@code > 0}
     * @return new settings
     */
    public DriverSettings withConnectTimeout(Duration d) {
        return new DriverSettings(d, callTimeout, maxOutstanding);
    }

    /**
     * These settings with another call timeout.
     *
     * @param d the call timeout, {@code > 0}
     * @return new settings
     */
    public DriverSettings withCallTimeout(Duration d) {
        return new DriverSettings(connectTimeout, d, maxOutstanding);
    }

    /**
     * These settings with another bound of outstanding calls per connection.
     *
     * @param n most calls queued or in flight per connection, {@code > 0}
     * @return new settings
     */
    public DriverSettings withMaxOutstanding(int n) {
        return new DriverSettings(connectTimeout, callTimeout, n);
    }
}
