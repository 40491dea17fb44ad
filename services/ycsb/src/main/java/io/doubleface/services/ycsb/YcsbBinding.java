package io.doubleface.services.ycsb;

import io.doubleface.api.BadRequestException;
import io.doubleface.api.HttpBinding;
import io.doubleface.api.HttpRequestView;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/**
 * {@code GET /query?fanout=K&size=small|medium|large&key=N} for the {@link YcsbService}.
 *
 * <ul>
 *   <li>{@code fanout}: 1 … number of shards; default {@value #DEFAULT_FANOUT} (or the shard count if smaller);
 *   <li>{@code size}: {@code small} (0.1 kB point read), {@code medium} (1 kB record), {@code large}
 *       (20 kB scan) per shard; default {@code small};
 *   <li>{@code key}: 0 … records-1; default a random key.
 * </ul>
 *
 * Response ({@code application/json}):
 * {@code {"key":N,"fanout":K,"size":"small","replies":[[{"key":k,"f3":"…"}],…]}} with one reply per
 * shard call, in call order. Unknown parameters are rejected (a typo should not silently become a
 * default). Thread-safe.
 */
public final class YcsbBinding implements HttpBinding<YcsbQuery, YcsbService.Result> {

    /** Default fanout: {@value}. */
    public static final int DEFAULT_FANOUT = 5;

    private final int shards;
    private final long records;

    public YcsbBinding(int shards, long records) {
        this.shards = shards;
        this.records = records;
    }

    @Override
    public YcsbQuery decode(HttpRequestView request) throws BadRequestException {
        Map<String, List<String>> p = request.query();
        for (String name : p.keySet()) {
            if (!name.equals("fanout") && !name.equals("size") && !name.equals("key")) {
                throw new BadRequestException("unknown parameter: " + name + " (expected: fanout, size, key)");
            }
        }
        int fanout = (int) number(p, "fanout", Math.min(DEFAULT_FANOUT, shards), 1, shards,
                "1.." + shards + ", the number of shards");
        String s = single(p, "size");
        Size size = s == null ? Size.SMALL : Size.parse(s);
        if (size == null) {
            throw new BadRequestException("size: '" + s + "' (expected: small, medium or large)");
        }
        long key = number(p, "key", -1, 0, records - 1, "0.." + (records - 1));
        if (key < 0) {
            key = ThreadLocalRandom.current().nextLong(records);
        }
        return new YcsbQuery(fanout, size, key);
    }

    private static String single(Map<String, List<String>> p, String name) throws BadRequestException {
        List<String> v = p.get(name);
        if (v == null) {
            return null;
        }
        if (v.size() != 1) {
            throw new BadRequestException(name + ": given " + v.size() + " times (expected: once)");
        }
        return v.get(0);
    }

    private static long number(Map<String, List<String>> p, String name, long dflt, long min, long max, String expected)
            throws BadRequestException {
        String s = single(p, name);
        if (s == null) {
            return dflt;
        }
        long v;
        try {
            v = Long.parseLong(s);
        } catch (NumberFormatException e) {
            throw new BadRequestException(name + ": '" + abbreviate(s) + "' (expected: " + expected + ")");
        }
        if (v < min || v > max) {
            throw new BadRequestException(name + ": " + v + " (expected: " + expected + ")");
        }
        return v;
    }

    private static String abbreviate(String s) {
        return s.length() <= 40 ? s : s.substring(0, 40) + "…";
    }

    @Override
    public ByteBuf encode(YcsbService.Result r, ByteBufAllocator alloc) {
        byte[] head = ("{\"key\":" + r.query().key() + ",\"fanout\":" + r.query().fanout() + ",\"size\":\""
                + r.query().size().label() + "\",\"replies\":[").getBytes(StandardCharsets.US_ASCII);
        int size = head.length + 3 + Math.max(0, r.parts().size() - 1);
        for (byte[] part : r.parts()) {
            size += part.length;
        }
        ByteBuf out = alloc.buffer(size);
        out.writeBytes(head);
        for (int i = 0; i < r.parts().size(); i++) {
            if (i > 0) {
                out.writeByte(',');
            }
            out.writeBytes(r.parts().get(i));
        }
        out.writeByte(']').writeByte('}').writeByte('\n');
        return out;
    }
}
