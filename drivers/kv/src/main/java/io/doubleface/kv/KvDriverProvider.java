package io.doubleface.kv;

import io.doubleface.driver.DriverSettings;
import io.doubleface.driver.spi.ShardDriver;
import io.doubleface.driver.spi.ShardDriverProvider;
import java.util.List;

/** The {@code kv://} scheme: {@link KvDriver} over {@link KvLeafServer} shards. */
public final class KvDriverProvider implements ShardDriverProvider {

    /** Instantiated by {@link java.util.ServiceLoader}. */
    public KvDriverProvider() {}

    @Override
    public List<String> schemes() {
        return List.of("kv");
    }

    @Override
    public String usage() {
        return "kv://HOST:FIRST-LAST or kv://HOST:PORT,HOST:PORT,...   (doubleface leaf kv); replica groups: "
                + "kv://HOST:PORT|HOST:PORT,..., kv://dns:///NAME:PORT, kv://dns+srv:///_SVC._tcp.NAME, kv://file:PATH";
    }

    @Override
    public ShardDriver<?> open(String uri, DriverSettings s) {
        return KvDriver.of(uri, KvDriver.Options.DEFAULT.with(s));
    }
}
