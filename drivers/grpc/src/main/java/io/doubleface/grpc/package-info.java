/**
 * The gRPC driver: unary calls of your own services' methods ({@link io.doubleface.grpc.GrpcCall},
 * any {@code MethodDescriptor}) sent by {@link io.doubleface.grpc.GrpcDriver} (scheme
 * {@code grpc://}), grpc-java with its Netty transport running on the server's own event loops.
 * See {@code docs/grpc.md}.
 */
package io.doubleface.grpc;
