package io.doubleface.api;

import io.doubleface.internal.engine.FanoutEngine;

/**
 * A public type of an API package whose method names an internal type: the leak
 * {@code ApiBoundaryTest} must report. Test code only; never on the main class path.
 */
public final class BoundaryLeakFixture {

    private BoundaryLeakFixture() {
    }

    /** {@return nothing; its return type is the leak} */
    public static FanoutEngine engine() {
        return null;
    }

    /** Not API itself: no leak. */
    @Internal
    public static FanoutEngine marked() {
        return null;
    }
}
