package io.doubleface.model;

/** The factory of threading models: one implementation per {@link Configuration.Kind}. */
public final class ThreadingModels {

    private ThreadingModels() {}

    /**
     * Builds the model of {@code config} and starts its threads.
     *
     * @throws IllegalArgumentException if the configuration does not fit the server (e.g. more
     *     frontend loops than I/O loops)
     */
    public static ThreadingModel create(Configuration config, ModelContext ctx) {
        return switch (config.kind()) {
            case THREAD -> new ThreadPerRequestModel(config, ctx);
            case TYPE1 -> new Type1Model(config, ctx);
            case TYPE2A -> new Type2aModel(config, ctx);
            case TYPE2B -> new Type2bModel(config, ctx);
            case DOUBLEFACE -> new DoubleFaceModel(config, ctx);
        };
    }
}
