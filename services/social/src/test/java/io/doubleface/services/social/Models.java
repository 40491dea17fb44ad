package io.doubleface.services.social;

import java.util.List;

/** The configurations every model-parameterized test runs against (as the μSuite tests' {@code Models}). */
final class Models {

    /** One or two configurations of each model, covering every code path of the five models. */
    static final List<String> ALL = List.of("thread-8", "thread-virtual", "type1-8", "type2a-1f2b", "type2a-2f1b",
            "type2b", "type2b-fixed-4", "doubleface", "doubleface-fifo", "doubleface-1");

    private Models() {}
}
