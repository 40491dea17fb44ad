package io.doubleface.server.internal;

import io.doubleface.api.FanoutService;
import io.doubleface.api.GrpcBinding;
import io.doubleface.internal.engine.FanoutEngine;
import io.doubleface.internal.engine.RouteStats;
import io.doubleface.internal.loop.LoopGroup;
import io.grpc.MethodDescriptor;
import io.grpc.ServerServiceDefinition;
import java.util.Map;
import java.util.Objects;

/** One gRPC method of a server: a service and its binding (method descriptor, decode, encode). */
public final class GrpcMethod<Q, R, I, O> {

    private final FanoutService<Q, ?, R> service;
    private final GrpcBinding<Q, R, I, O> binding;

    private GrpcMethod(FanoutService<Q, ?, R> service, GrpcBinding<Q, R, I, O> binding) {
        this.service = Objects.requireNonNull(service, "service");
        this.binding = Objects.requireNonNull(binding, "binding");
        MethodDescriptor<I, O> m = Objects.requireNonNull(binding.method(), "binding.method()");
        if (m.getType() != MethodDescriptor.MethodType.UNARY) {
            throw new IllegalArgumentException("grpc method " + m.getFullMethodName() + ": " + m.getType()
                    + " (expected: UNARY)");
        }
    }

    public static <Q, R, I, O> GrpcMethod<Q, R, I, O> of(FanoutService<Q, ?, R> service, GrpcBinding<Q, R, I, O> binding) {
        return new GrpcMethod<>(service, binding);
    }

    /** {@return the method's full name, e.g. {@code pkg.Service/Method}} */
    public String fullName() {
        return binding.method().getFullMethodName();
    }

    /** Adds this method's handler to its service in {@code services}; returns the handler's route stats. */
    RouteStats addTo(Map<String, ServerServiceDefinition.Builder> services, FanoutEngine engine, LoopGroup io) {
        MethodDescriptor<I, O> m = binding.method();
        GrpcFanoutHandler<Q, R, I, O> handler = new GrpcFanoutHandler<>(engine, service, binding, io);
        services.computeIfAbsent(m.getServiceName(), ServerServiceDefinition::builder)
                .addMethod(GrpcFanoutHandler.registered(m), handler);
        return handler.routeStats();
    }
}
