package io.doubleface.redis;

import io.lettuce.core.codec.StringCodec;
import io.netty.buffer.ByteBufUtil;
import java.nio.charset.StandardCharsets;

/**
 * Lettuce's UTF-8 {@link StringCodec} with an exact size estimate, the codec of {@link Redis#utf8()}.
 *
 * <p>Lettuce writes a string argument as {@code $<length>\r\n<bytes>\r\n}. Its UTF-8 codec only
 * bounds the length ({@code 3 × chars}), so for every key and value Lettuce encodes into a temporary
 * pooled buffer, then copies that into the command's buffer. With the exact UTF-8 length (Netty's
 * {@link ByteBufUtil#utf8Bytes}, the counterpart of the {@link ByteBufUtil#writeUtf8} the codec
 * writes with, so the two agree even on unpaired surrogates, each written as {@code ?}), Lettuce
 * writes the header and the bytes straight into the command's buffer. The bytes on the wire are
 * the same ({@code ExactUtf8CodecTest}).
 */
final class ExactUtf8Codec extends StringCodec {

    /** The shared instance (stateless). */
    static final ExactUtf8Codec INSTANCE = new ExactUtf8Codec();

    private ExactUtf8Codec() {
        super(StandardCharsets.UTF_8);
    }

    @Override
    public int estimateSize(Object keyOrValue) {
        return keyOrValue instanceof CharSequence s ? ByteBufUtil.utf8Bytes(s) : 0;
    }

    @Override
    public boolean isEstimateExact() {
        return true;
    }
}
