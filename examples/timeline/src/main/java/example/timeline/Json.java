package example.timeline;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.doubleface.api.BodyCodec;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufInputStream;
import java.io.InputStream;

/** JSON with Jackson: the body codec and the response encoder of the example's bindings. */
final class Json {

    static final ObjectMapper MAPPER = new ObjectMapper();

    private Json() {}

    /** A body codec for {@code type}; Jackson's parse errors become the 400's reason. */
    static <T> BodyCodec<T> body(Class<T> type) {
        return body -> MAPPER.readValue((InputStream) new ByteBufInputStream(body), type);
    }

    static ByteBuf write(Object value, ByteBufAllocator alloc) {
        try {
            byte[] b = MAPPER.writeValueAsBytes(value);
            return alloc.buffer(b.length).writeBytes(b);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /** {@return an error body {@code {"error": message, "status": status}}, as the server's JSON error encoder writes} */
    static byte[] error(int status, String message) {
        try {
            return MAPPER.writeValueAsBytes(java.util.Map.of("error", message, "status", status));
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }
}
