package io.doubleface.internal.engine;

/**
 * What a listener knows about a request it submits: implemented by the listeners' response sinks
 * (no object of its own per request), handed on by {@link ResponseSink#info()} and read through
 * {@link io.doubleface.api.RequestContext}.
 * Values never change once the request is submitted; read from any thread.
 */
public interface RequestInfo {

    /** {@return the route's name, as its statistics name it} */
    String route();

    /** {@return the HTTP method, {@code POST} for gRPC} */
    String method();

    /** {@return the decoded path, without the query} */
    String path();

    /**
     * {@return the value of a path variable, or {@code null} if the route has none of that name}
     *
     * @param name the variable's name, without braces
     */
    String pathVariable(String name);

    /**
     * {@return a header's first value, or {@code null}}
     *
     * @param name the header's name, case-insensitive
     */
    String header(String name);

    /** What a request that came from no listener has: no route, method, path, variables or headers. */
    RequestInfo NONE = new RequestInfo() {
        @Override
        public String route() {
            return null;
        }

        @Override
        public String method() {
            return null;
        }

        @Override
        public String path() {
            return null;
        }

        @Override
        public String pathVariable(String name) {
            return null;
        }

        @Override
        public String header(String name) {
            return null;
        }
    };

}
