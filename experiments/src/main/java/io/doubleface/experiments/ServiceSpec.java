package io.doubleface.experiments;

import java.util.List;
import java.util.Locale;

/**
 * What the experiment runner needs to know of a service to run it: how to start its leaves and
 * its mid-tier, and what the load generator asks. {@code ycsb} is the default and keeps the
 * runner's own options (store driver, records, reply work, fanout and size); the μSuite services
 * ({@code hdsearch}, {@code router}, {@code setalgebra}, {@code recommend}: {@code doubleface leaf
 * SERVICE}, {@code doubleface serve SERVICE}, docs/services.md) run their gRPC leaves, one leaf per
 * shard, with their default data, and every experiment's request becomes the service's
 * {@link #requests}.
 *
 * @param name the service, as in {@code doubleface serve NAME}
 * @param requests the load generator's request: one {@code --url} template or a weighted
 *     {@code --mix} ({@code W:PATH,W:PATH}); {@code {key}} is a key in 0..records-1
 */
public record ServiceSpec(String name, String requests) {

    /** The YCSB service (the runner's default). */
    public static final ServiceSpec YCSB = new ServiceSpec("ycsb", null);

    /** The services the runner knows. */
    public static final List<ServiceSpec> ALL = List.of(YCSB,
            new ServiceSpec("hdsearch", "/hdsearch?query={key}&k=10"),
            // μTune's Router: gets and sets one to one, as YCSB workload A
            new ServiceSpec("router", "1:/router/get?key=key:{key},1:/router/set?key=key:{key}&value=v{key}"),
            new ServiceSpec("setalgebra", "/setalgebra?query={key}&limit=10"),
            new ServiceSpec("recommend", "/recommend?query={key}"),
            // DeathStarBench's social network: 9 home-timeline reads to 1 post (the load generator sends
            // the post as a POST with its fields in the query); {key} is a user, so --records is the user count
            new ServiceSpec("social", "9:/social/timeline?user={key}&limit=10,"
                    + "1:POST /social/posts?user={key}&text=a+post+from+the+load+generator"));

    /** {@return the service called {@code name}} */
    public static ServiceSpec of(String name) {
        String n = name.toLowerCase(Locale.ROOT);
        for (ServiceSpec s : ALL) {
            if (s.name.equals(n)) {
                return s;
            }
        }
        throw new IllegalArgumentException("--service: '" + name + "' (expected one of: "
                + String.join(", ", ALL.stream().map(ServiceSpec::name).toList()) + ")");
    }

    /** Whether this is the social network (Redis and MongoDB shards from {@code leaf social}, not gRPC leaves). */
    public boolean isSocial() {
        return name.equals("social");
    }

    /** Whether this is the YCSB service (its shards are the store of {@code --driver}). */
    public boolean isYcsb() {
        return this == YCSB || name.equals("ycsb");
    }

    /** The load generator's arguments for this service's requests. */
    List<String> loadArgs() {
        return requests.indexOf(',') >= 0 ? List.of("--mix", requests) : List.of("--url", requests);
    }
}
