package io.doubleface.server.internal;

import io.doubleface.api.FanoutService;
import io.doubleface.api.HttpBinding;
import io.doubleface.internal.engine.RouteStats;
import io.netty.handler.codec.http.HttpMethod;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * The HTTP routes of a server: method + path pattern → service and binding. A pattern is a path of
 * literal segments and variables ({@code /users/{user}/timeline}); a variable matches exactly one
 * non-empty segment. Routes are tried in the order they were added; the first whose pattern and
 * method match wins. A path that some route's pattern matches but none with this method gives
 * {@code 405} with {@code Allow}; a path no pattern matches, {@code 404}.
 *
 * <p>Immutable after construction; thread-safe. Matching allocates only the variable values.
 */
public final class HttpRouter {

    /** One route. */
    public static final class Route<Q, R> {
        final HttpMethod method;
        final String pattern;
        final String[] segments; // literal, or null for a variable
        final String[] names;    // variable name, or null for a literal
        final FanoutService<Q, ?, R> service;
        final HttpBinding<Q, R> binding;
        final boolean literal; // no variables
        final Match matched;   // the match of a literal route: shared, nothing to allocate
        final RouteStats stats;

        Route(HttpMethod method, String pattern, FanoutService<Q, ?, R> service, HttpBinding<Q, R> binding) {
            this.method = Objects.requireNonNull(method, "method");
            this.pattern = Objects.requireNonNull(pattern, "pattern");
            this.service = Objects.requireNonNull(service, "service");
            this.binding = Objects.requireNonNull(binding, "binding");
            if (!pattern.startsWith("/")) {
                throw new IllegalArgumentException("route pattern: '" + pattern + "' (expected: starting with /)");
            }
            String[] parts = pattern.equals("/") ? new String[0] : pattern.substring(1).split("/", -1);
            segments = new String[parts.length];
            names = new String[parts.length];
            Set<String> seen = new LinkedHashSet<>();
            for (int i = 0; i < parts.length; i++) {
                String p = parts[i];
                if (p.isEmpty()) {
                    throw new IllegalArgumentException("route pattern: '" + pattern + "' has an empty segment");
                }
                if (p.startsWith("{") && p.endsWith("}") && p.length() > 2) {
                    String name = p.substring(1, p.length() - 1);
                    if (!seen.add(name)) {
                        throw new IllegalArgumentException("route pattern: '" + pattern + "' names {" + name + "} twice");
                    }
                    names[i] = name;
                } else if (p.indexOf('{') >= 0 || p.indexOf('}') >= 0) {
                    throw new IllegalArgumentException("route pattern: '" + pattern + "': segment '" + p
                            + "' (expected: a literal or a whole-segment {variable})");
                } else {
                    segments[i] = p;
                }
            }
            literal = seen.isEmpty();
            matched = literal ? new Match(this, NO_VALUES, null) : null;
            stats = new RouteStats(method + " " + pattern);
        }

        public HttpMethod method() {
            return method;
        }

        public String pattern() {
            return pattern;
        }

        public FanoutService<Q, ?, R> service() {
            return service;
        }

        public HttpBinding<Q, R> binding() {
            return binding;
        }

        Route<Q, R> fresh() {
            return new Route<>(method, pattern, service, binding);
        }

        /** This route's requests by outcome, and their time. */
        public RouteStats stats() {
            return stats;
        }

        /** The variable values if {@code parts} matches, else {@code null}. */
        String[] match(String[] parts) {
            if (parts.length != segments.length) {
                return null;
            }
            String[] values = null;
            for (int i = 0; i < parts.length; i++) {
                if (names[i] != null) {
                    if (parts[i].isEmpty()) {
                        return null;
                    }
                    if (values == null) {
                        values = new String[parts.length];
                    }
                    values[i] = parts[i];
                } else if (!segments[i].equals(parts[i])) {
                    return null;
                }
            }
            return values == null ? NO_VALUES : values;
        }

        /** The value of variable {@code name} among {@code values} (from {@link #match}). */
        String variable(String[] values, String name) {
            String v = variableOrNull(values, name);
            if (v != null) {
                return v;
            }
            // a programming error in the binding, not a bad request: 500, not 400
            throw new IllegalStateException("path variable {" + name + "}: not in the route pattern " + pattern);
        }

        /** The value of variable {@code name} among {@code values}, or {@code null} if the pattern has none. */
        String variableOrNull(String[] values, String name) {
            for (int i = 0; i < names.length; i++) {
                if (name.equals(names[i])) {
                    return values[i];
                }
            }
            return null;
        }

        @Override
        public String toString() {
            return method + " " + pattern;
        }
    }

    private static final String[] NO_VALUES = new String[0];

    /** The outcome of {@link #route}: a route and its variables, or the methods allowed on the path. */
    public record Match(Route<?, ?> route, String[] values, Set<HttpMethod> allowed) {}

    private final List<Route<?, ?>> routes;

    private HttpRouter(List<Route<?, ?>> routes) {
        this.routes = List.copyOf(routes);
    }

    /** Builds a router; fails fast on a bad pattern or a route added twice. */
    public static final class Builder {
        private final List<Route<?, ?>> routes = new ArrayList<>();

        public <Q, R> Builder add(HttpMethod method, String pattern, FanoutService<Q, ?, R> service,
                HttpBinding<Q, R> binding) {
            Route<Q, R> r = new Route<>(method, pattern, service, binding);
            for (Route<?, ?> o : routes) {
                if (o.method.equals(method) && o.pattern.equals(pattern)) {
                    throw new IllegalArgumentException("route " + r + " added twice");
                }
            }
            routes.add(r);
            return this;
        }

        public boolean isEmpty() {
            return routes.isEmpty();
        }

        /** The router of the routes added so far; each build has routes (and route stats) of its own. */
        public HttpRouter build() {
            List<Route<?, ?>> fresh = new ArrayList<>(routes.size());
            for (Route<?, ?> r : routes) {
                fresh.add(r.fresh());
            }
            return new HttpRouter(fresh);
        }
    }

    public List<Route<?, ?>> routes() {
        return routes;
    }

    /**
     * {@return a router of the same routes, each with stats of its own}: a server's configuration
     * holds the routes as a template, and each server started from it counts its own requests
     */
    public HttpRouter fresh() {
        List<Route<?, ?>> copies = new ArrayList<>(routes.size());
        for (Route<?, ?> r : routes) {
            copies.add(r.fresh());
        }
        return new HttpRouter(copies);
    }

    /**
     * Finds the route of {@code method} on {@code path}: a match with a route, or without one and
     * with the methods allowed on the path ({@code 405}), or with none ({@code 404}).
     */
    public Match route(HttpMethod method, String path) {
        String[] parts = null; // split lazily: routes without variables compare the whole path
        Set<HttpMethod> allowed = null;
        for (Route<?, ?> r : routes) {
            String[] values;
            if (r.literal) {
                if (!path.equals(r.pattern)) {
                    continue;
                }
                if (r.method.equals(method)) {
                    return r.matched;
                }
                values = NO_VALUES;
            } else {
                if (parts == null) {
                    parts = path.equals("/") || path.isEmpty() ? NO_VALUES : path.substring(1).split("/", -1);
                }
                values = r.match(parts);
            }
            if (values == null) {
                continue;
            }
            if (r.method.equals(method)) {
                return new Match(r, values, null);
            }
            if (allowed == null) {
                allowed = new LinkedHashSet<>();
            }
            allowed.add(r.method);
        }
        return new Match(null, null, allowed == null ? Set.of() : allowed);
    }
}
