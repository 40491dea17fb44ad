/**
 * gRPC KV leaves ({@code doubleface.kv.v1.KvService}): {@link io.doubleface.grpc.GrpcLeafServer}
 * (many shards in one process) and {@link io.doubleface.grpc.GrpcDriver} (scheme {@code grpc://}),
 * grpc-java with its Netty transport running on the server's own event loops. See
 * {@code docs/grpc.md}.
 */
package io.doubleface.grpc;
