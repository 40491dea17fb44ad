package io.doubleface.loadgen;

import io.grpc.MethodDescriptor;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The request mix as {@code doubleface.ycsb.v1.FanoutService/Query} calls: each template
 * {@code /query?fanout=K&size=S&key=N|{key}} becomes a {@code QueryRequest} message, encoded here
 * by hand (three fields; the load generator needs no protobuf runtime). Replies are read and
 * discarded, as the HTTP generator discards bodies.
 *
 * <p>Immutable and thread-safe; the random source is the caller's.
 */
final class GrpcQueries {

    /** Full name of the method called: {@value}. */
    static final String METHOD_NAME = "doubleface.ycsb.v1.FanoutService/Query";

    /** The unary method, on raw message bytes. */
    static final MethodDescriptor<byte[], byte[]> METHOD = MethodDescriptor.<byte[], byte[]>newBuilder()
            .setType(MethodDescriptor.MethodType.UNARY)
            .setFullMethodName(METHOD_NAME)
            .setRequestMarshaller(new Bytes())
            .setResponseMarshaller(new Discard())
            .build();

    /** Per template: the encoded fanout and size fields, then the key (literal, random, or absent). */
    private record Query(byte[] prefix, long key, boolean randomKey) {}

    private final List<Query> queries;

    private GrpcQueries(List<Query> queries) {
        this.queries = queries;
    }

    /**
     * Reads every template of {@code mix} as a query.
     *
     * @throws IllegalArgumentException if a template is not {@code /query} with only
     *     {@code fanout}, {@code size} and {@code key} parameters
     */
    static GrpcQueries of(RequestMix mix) {
        List<Query> out = new ArrayList<>();
        for (String path : mix.paths()) {
            out.add(parse(path));
        }
        return new GrpcQueries(out);
    }

    private static Query parse(String path) {
        int q = path.indexOf('?');
        String p = q < 0 ? path : path.substring(0, q);
        if (!p.equals("/query")) {
            throw bad(path, "path " + p);
        }
        ByteBuilder prefix = new ByteBuilder();
        long key = -1;
        boolean random = false;
        if (q >= 0) {
            for (String param : path.substring(q + 1).split("&")) {
                if (param.isEmpty()) {
                    continue;
                }
                int eq = param.indexOf('=');
                String name = eq < 0 ? param : param.substring(0, eq);
                String value = eq < 0 ? "" : param.substring(eq + 1);
                switch (name) {
                    case "fanout" -> {
                        prefix.tag(1, 0).varint(number(path, name, value));
                    }
                    case "size" -> {
                        byte[] s = value.getBytes(StandardCharsets.UTF_8);
                        prefix.tag(2, 2).varint(s.length).bytes(s);
                    }
                    case "key" -> {
                        if (value.equals(RequestMix.KEY)) {
                            random = true;
                        } else {
                            key = number(path, name, value);
                        }
                    }
                    default -> throw bad(path, "parameter " + name);
                }
            }
        }
        return new Query(prefix.toArray(), key, random);
    }

    private static long number(String path, String name, String value) {
        try {
            return Long.parseLong(value);
        } catch (NumberFormatException e) {
            throw bad(path, name + "=" + value);
        }
    }

    private static IllegalArgumentException bad(String path, String what) {
        return new IllegalArgumentException("grpc request '" + path + "': " + what + " (expected: /query?fanout=K"
                + "&size=S&key=N or key=" + RequestMix.KEY + ", sent as " + METHOD_NAME + ")");
    }

    /** The encoded request of template {@code i}, with a key drawn from {@code [0, keys)} where it has {@value RequestMix#KEY}. */
    byte[] encode(int i, SplittableRandom random, int keys) {
        Query q = queries.get(i);
        long key = q.randomKey() ? random.nextLong(keys) : q.key();
        if (key < 0) {
            return q.prefix();
        }
        return new ByteBuilder().bytes(q.prefix()).tag(3, 0).varint(key).toArray();
    }

    /** Protobuf wire encoding of the few things a QueryRequest needs. */
    private static final class ByteBuilder {
        private byte[] buf = new byte[32];
        private int n;

        ByteBuilder tag(int field, int wireType) {
            return varint((field << 3) | wireType);
        }

        ByteBuilder varint(long v) {
            while ((v & ~0x7FL) != 0) {
                put((byte) ((v & 0x7F) | 0x80));
                v >>>= 7;
            }
            put((byte) v);
            return this;
        }

        ByteBuilder bytes(byte[] b) {
            for (byte x : b) {
                put(x);
            }
            return this;
        }

        private void put(byte b) {
            if (n == buf.length) {
                buf = java.util.Arrays.copyOf(buf, n * 2);
            }
            buf[n++] = b;
        }

        byte[] toArray() {
            return java.util.Arrays.copyOf(buf, n);
        }
    }

    private static final class Bytes implements MethodDescriptor.Marshaller<byte[]> {
        @Override
        public InputStream stream(byte[] value) {
            return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
            try (stream) {
                return stream.readAllBytes();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    /** Reads the reply and keeps nothing. */
    private static final class Discard implements MethodDescriptor.Marshaller<byte[]> {
        private static final byte[] NONE = new byte[0];

        @Override
        public InputStream stream(byte[] value) {
            return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
            try (stream) {
                stream.skip(Long.MAX_VALUE);
                while (stream.read() >= 0) {
                    stream.skip(Long.MAX_VALUE);
                }
                return NONE;
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
