package io.doubleface.tune;

import java.util.Locale;

/**
 * How the load adapter chooses: μTune's policy and the two baselines it was compared with. Each
 * is selectable as a server configuration name ({@code --config adaptive} etc.).
 */
public enum TuneStrategy {
    /**
     * μTune, plus live refinement: event-based load monitor ({@link RingBufferDetector}), any
     * configuration of the profile.
     */
    ADAPTIVE("adaptive", "ring"),
    /** As {@link #ADAPTIVE} but with the fixed 5 ms time-window detector (μTune's TBD baseline). */
    ADAPTIVE_WINDOW("adaptive-window", "window"),
    /**
     * Few-to-Many style: 5 ms windows, and only the pool sizes of the peak-sustaining
     * configuration's family vary (e.g. {@code sdb-1n-8w} ↔ {@code sdb-1n-64w}).
     */
    FM("fm", "window");

    private final String label;
    private final String defaultDetector;

    TuneStrategy(String label, String defaultDetector) {
        this.label = label;
        this.defaultDetector = defaultDetector;
    }

    /** The name used as {@code --config}. */
    public String label() {
        return label;
    }

    /** The load detector the policy uses unless told otherwise ({@link LoadDetector#create}). */
    public String defaultDetector() {
        return defaultDetector;
    }

    /** The policy named {@code name} ({@code adaptive}, {@code adaptive-window}, {@code fm}), or {@code null}. */
    public static TuneStrategy byLabel(String name) {
        if (name == null) {
            return null;
        }
        String n = name.strip().toLowerCase(Locale.ROOT);
        for (TuneStrategy p : values()) {
            if (p.label.equals(n)) {
                return p;
            }
        }
        return null;
    }
}
