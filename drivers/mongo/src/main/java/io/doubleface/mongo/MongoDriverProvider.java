package io.doubleface.mongo;

import io.doubleface.driver.DriverSettings;
import io.doubleface.driver.spi.ShardDriver;
import io.doubleface.driver.spi.ShardDriverProvider;
import java.util.List;

/**
 * The {@code mongodb://} scheme: {@link MongoDriver} over MongoDB deployments or
 * {@link MongoLeafServer} shards.
 */
public final class MongoDriverProvider implements ShardDriverProvider {

    /** Instantiated by {@link java.util.ServiceLoader}. */
    public MongoDriverProvider() {}

    @Override
    public List<String> schemes() {
        return List.of(MongoDriver.SCHEME);
    }

    @Override
    public String usage() {
        return "mongodb://HOST:FIRST-LAST[?transport=netty|aio|aio-fixed&poolSize=N&tls=true&cacert=PEM], "
                + "mongodb://HOST:PORT,HOST:PORT,... "
                + "or full connection strings 'mongodb://HOSTS/[DB][?OPTIONS];mongodb://...' (doubleface leaf mongo)";
    }

    @Override
    public ShardDriver<?> open(String uri, DriverSettings s) {
        return MongoDriver.of(uri, MongoDriver.Options.DEFAULT.with(s));
    }
}
