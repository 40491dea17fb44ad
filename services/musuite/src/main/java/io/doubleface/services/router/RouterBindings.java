package io.doubleface.services.router;

import io.doubleface.api.BadRequestException;
import io.doubleface.api.GrpcBinding;
import io.doubleface.api.HttpBinding;
import io.doubleface.api.HttpRequestView;
import io.doubleface.services.musuite.QueryParams;
import io.doubleface.services.router.v1.GetReply;
import io.doubleface.services.router.v1.GetRequest;
import io.doubleface.services.router.v1.RouterGrpc;
import io.doubleface.services.router.v1.SetReply;
import io.doubleface.services.router.v1.SetRequest;
import io.grpc.MethodDescriptor;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.charset.StandardCharsets;

/**
 * Router's upstream bindings: {@code GET /router/get?key=K}, {@code GET /router/set?key=K&value=V}
 * (JSON answers, {@link RouterResult#toJson}) and their gRPC twins {@code doubleface.router.v1.Router/Get}
 * and {@code /Set}, with the same limits and error texts ({@link RouterKeys#checkKey},
 * {@link RouterKeys#checkValue}). Thread-safe.
 */
public final class RouterBindings {

    private RouterBindings() {}

    static ByteBuf utf8(RouterResult r, ByteBufAllocator alloc) {
        byte[] b = r.toJson().getBytes(StandardCharsets.UTF_8);
        return alloc.buffer(b.length).writeBytes(b);
    }

    /** {@code GET /router/get?key=K}. */
    public static final class GetHttp implements HttpBinding<RouterService.GetQuery, RouterResult.Got> {
        @Override
        public RouterService.GetQuery decode(HttpRequestView request) throws BadRequestException {
            QueryParams.requireOnly(request, "key");
            return new RouterService.GetQuery(RouterKeys.checkKey(request.queryParam("key")));
        }

        @Override
        public ByteBuf encode(RouterResult.Got response, ByteBufAllocator alloc) {
            return utf8(response, alloc);
        }
    }

    /** {@code GET /router/set?key=K&value=V}. */
    public static final class SetHttp implements HttpBinding<RouterService.SetQuery, RouterResult.Stored> {
        @Override
        public RouterService.SetQuery decode(HttpRequestView request) throws BadRequestException {
            QueryParams.requireOnly(request, "key", "value");
            return new RouterService.SetQuery(RouterKeys.checkKey(request.queryParam("key")),
                    RouterKeys.checkValue(request.queryParam("value")));
        }

        @Override
        public ByteBuf encode(RouterResult.Stored response, ByteBufAllocator alloc) {
            return utf8(response, alloc);
        }
    }

    /** {@code doubleface.router.v1.Router/Get}. */
    public static final class GetGrpc implements GrpcBinding<RouterService.GetQuery, RouterResult.Got, GetRequest, GetReply> {
        @Override
        public MethodDescriptor<GetRequest, GetReply> method() {
            return RouterGrpc.getGetMethod();
        }

        @Override
        public RouterService.GetQuery decode(GetRequest request) throws BadRequestException {
            return new RouterService.GetQuery(RouterKeys.checkKey(request.getKey()));
        }

        @Override
        public GetReply encode(RouterResult.Got response) {
            return response.toProto();
        }
    }

    /** {@code doubleface.router.v1.Router/Set}. */
    public static final class SetGrpc implements GrpcBinding<RouterService.SetQuery, RouterResult.Stored, SetRequest, SetReply> {
        @Override
        public MethodDescriptor<SetRequest, SetReply> method() {
            return RouterGrpc.getSetMethod();
        }

        @Override
        public RouterService.SetQuery decode(SetRequest request) throws BadRequestException {
            return new RouterService.SetQuery(RouterKeys.checkKey(request.getKey()),
                    RouterKeys.checkValue(request.getValue()));
        }

        @Override
        public SetReply encode(RouterResult.Stored response) {
            return response.toProto();
        }
    }
}
