package io.doubleface.grpc;

import io.doubleface.driver.DriverSettings;
import io.doubleface.driver.spi.ShardDriver;
import io.doubleface.driver.spi.ShardDriverProvider;
import java.util.List;

/** The {@code grpc://} scheme: a {@link GrpcDriver} over the leaves of the URI. */
public final class GrpcDriverProvider implements ShardDriverProvider {

    /** The provider {@link java.util.ServiceLoader} instantiates. */
    public GrpcDriverProvider() {}

    @Override
    public List<String> schemes() {
        return List.of("grpc", GrpcDriver.TLS_SCHEME);
    }

    @Override
    public String usage() {
        return "grpc://HOST:FIRST-LAST or grpc://HOST:PORT,HOST:PORT,...   (doubleface leaf grpc); grpcs://… for TLS"
                + " [?cacert=PEM]";
    }

    @Override
    public ShardDriver<?> open(String uri, DriverSettings settings) {
        return GrpcDriver.of(uri, settings);
    }
}
