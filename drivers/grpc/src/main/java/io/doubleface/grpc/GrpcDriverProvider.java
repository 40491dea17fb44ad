package io.doubleface.grpc;

import io.doubleface.driver.DriverSettings;
import io.doubleface.driver.ShardDriver;
import io.doubleface.driver.ShardDriverProvider;
import java.util.List;
import java.util.function.LongConsumer;

/** The {@code grpc://} scheme: {@link GrpcDriver} over {@code doubleface.kv.v1} leaves ({@link GrpcLeafServer}). */
public final class GrpcDriverProvider implements ShardDriverProvider {

    /** The provider {@link java.util.ServiceLoader} instantiates. */
    public GrpcDriverProvider() {}

    @Override
    public List<String> schemes() {
        return List.of("grpc");
    }

    @Override
    public String usage() {
        return "grpc://HOST:FIRST-LAST or grpc://HOST:PORT,HOST:PORT,...   (doubleface leaf grpc)";
    }

    @Override
    public ShardDriver<?> open(String uri, DriverSettings settings) {
        return new GrpcDriver(GrpcDriver.parse(uri), settings);
    }

    /** gRPC leaves compute their records at start-up ({@code doubleface leaf grpc --records N}); nothing to load. */
    @Override
    public void loadData(String uri, long records, LongConsumer progress) {
        throw new UnsupportedOperationException("grpc leaves generate their records themselves: start them with "
                + "'doubleface leaf grpc --records " + records + "'");
    }
}
