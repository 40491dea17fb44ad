package io.doubleface.internal.engine;

import io.doubleface.model.Configuration;

/** The factory of threading models: one implementation per kind of {@link Configuration}. */
public final class ThreadingModels {

    private ThreadingModels() {}

    /**
     * Builds the model of {@code config} and starts its threads.
     *
     * @throws IllegalArgumentException if the configuration does not fit the server (e.g. more
     *     frontend loops than I/O loops)
     */
    public static ThreadingModel create(Configuration config, ModelContext ctx) {
        return switch (config) {
            case Configuration.ThreadPerRequest c -> new ThreadPerRequestModel(c, ctx);
            case Configuration.Type1 c -> new Type1Model(c, ctx);
            case Configuration.Type2a c -> new Type2aModel(c, ctx);
            case Configuration.Type2b c -> new Type2bModel(c, ctx);
            case Configuration.DoubleFace c -> new DoubleFaceModel(c, ctx);
        };
    }
}
