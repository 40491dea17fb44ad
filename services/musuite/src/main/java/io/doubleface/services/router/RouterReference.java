package io.doubleface.services.router;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Router computed in one process: one map with the preloaded keys and every set applied, and the
 * layout that says which leaves a set reaches. What the service must answer while every leaf is up.
 * Not thread-safe.
 */
public final class RouterReference {

    private final Map<String, String> store = new HashMap<>();
    private final RouterKeys layout;

    /**
     * The reference of {@code data} over {@code layout}.
     *
     * @param data the preloaded keys
     * @param layout groups and replicas
     */
    public RouterReference(RouterData data, RouterKeys layout) {
        this.layout = layout;
        for (int n = 0; n < data.keys(); n++) {
            store.put(RouterData.key(n), data.value(n));
        }
    }

    /**
     * {@return the answer to a get of {@code key}}
     *
     * @param key the key
     */
    public RouterResult.Got get(String key) {
        String v = store.get(key);
        return new RouterResult.Got(key, v != null, v == null ? "" : v);
    }

    /**
     * Applies a set; {@return its answer when every replica stores it}
     *
     * @param key the key
     * @param value the value
     */
    public RouterResult.Stored set(String key, String value) {
        store.put(key, value);
        return new RouterResult.Stored(key, replicas(key), List.of());
    }

    /**
     * {@return the leaves holding {@code key}, ascending}
     *
     * @param key the key
     */
    public List<Integer> replicas(String key) {
        int g = layout.group(key);
        List<Integer> out = new ArrayList<>();
        for (int r = 0; r < layout.replicas(); r++) {
            out.add(layout.leaf(g, r));
        }
        return out;
    }
}
