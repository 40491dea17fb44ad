package io.doubleface.loadgen;

/**
 * The inter-arrival time distribution of an open-loop run, by its squared coefficient of variation
 * {@code C² = Var(gap) / E[gap]²} at the mean the rate sets (the variability paper's knob on the
 * workload side, WWW '19 §2):
 *
 * <ul>
 *   <li>{@code poisson} (the default): exponential gaps, {@code C² = 1};
 *   <li>{@code deterministic}: every gap exactly {@code 1/rate}, {@code C² = 0};
 *   <li>{@code h2:C2}: bursty — a two-phase hyperexponential with balanced means, {@code C² = C2 > 1}:
 *       with probability {@code p} a gap is exponential at rate {@code 2p·λ}, else at {@code 2(1−p)·λ},
 *       {@code p = (1 + √((C²−1)/(C²+1))) / 2}; most gaps are short and a few are long.
 * </ul>
 *
 * @param kind the distribution
 * @param c2 its squared coefficient of variation (1 for Poisson, 0 for deterministic)
 */
public record Arrivals(Kind kind, double c2) {

    /** The distributions. */
    public enum Kind {
        /** Exponential gaps. */
        POISSON,
        /** Constant gaps. */
        DETERMINISTIC,
        /** Two-phase hyperexponential gaps with balanced means. */
        H2
    }

    /** Largest {@code C²} accepted for {@code h2}: {@value}. */
    public static final double MAX_C2 = 1000;

    /** Poisson arrivals. */
    public static final Arrivals POISSON = new Arrivals(Kind.POISSON, 1);
    /** Deterministic arrivals. */
    public static final Arrivals DETERMINISTIC = new Arrivals(Kind.DETERMINISTIC, 0);

    /**
     * Checks the parameters.
     *
     * @throws IllegalArgumentException if {@code c2} does not match the kind ({@code h2}: {@code 1 < C² <= }{@value #MAX_C2})
     */
    public Arrivals {
        switch (kind) {
            case POISSON -> require(c2 == 1, c2);
            case DETERMINISTIC -> require(c2 == 0, c2);
            case H2 -> {
                if (!(c2 > 1 && c2 <= MAX_C2)) {
                    throw new IllegalArgumentException("h2: C² " + c2 + " (expected: > 1 and <= " + (int) MAX_C2
                            + "; C² = 1 is poisson)");
                }
            }
        }
    }

    private static void require(boolean ok, double c2) {
        if (!ok) {
            throw new IllegalArgumentException("C² " + c2 + " does not match the distribution");
        }
    }

    /**
     * Parses {@code poisson}, {@code deterministic} or {@code h2:C2} (e.g. {@code h2:4}).
     *
     * @param spec the text
     * @return the arrivals
     * @throws IllegalArgumentException naming the expected forms
     */
    public static Arrivals parse(String spec) {
        String s = spec.strip();
        if (s.equals("poisson")) {
            return POISSON;
        }
        if (s.equals("deterministic")) {
            return DETERMINISTIC;
        }
        if (s.startsWith("h2:")) {
            double c2;
            try {
                c2 = Double.parseDouble(s.substring(3));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("arrivals: '" + spec + "' (expected: h2:C2 with a number C2 > 1)");
            }
            return new Arrivals(Kind.H2, c2);
        }
        throw new IllegalArgumentException("arrivals: '" + spec + "' (expected: poisson, deterministic or h2:C2, "
                + "e.g. h2:4)");
    }

    /** {@return the form {@link #parse} reads} */
    @Override
    public String toString() {
        return switch (kind) {
            case POISSON -> "poisson";
            case DETERMINISTIC -> "deterministic";
            case H2 -> "h2:" + (c2 == Math.rint(c2) ? Long.toString((long) c2) : Double.toString(c2));
        };
    }
}
