package io.doubleface.server.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.netty.handler.codec.http.HttpDecoderConfig;
import java.util.Arrays;

/**
 * Coverage-guided fuzzing (Jazzer) of the request decoder's fast path: for any bytes, cut into
 * reads at the points the input's first bytes choose, the decoder with {@link SimpleRequestHead}
 * hands on the same requests, bodies and failures as without it (Netty's decoder alone).
 * {@code SimpleRequestHeadTest} runs the same comparison on generated heads in every build;
 * {@code JAZZER_FUZZ=1} fuzzes for {@code maxDuration} (CI does, docs/reliability.md).
 */
class SimpleRequestHeadFuzzTest {

    private static final HttpDecoderConfig SMALL = new HttpDecoderConfig().setMaxInitialLineLength(48).setMaxHeaderSize(96);
    private static final HttpDecoderConfig DEFAULT = new HttpDecoderConfig();

    @FuzzTest(maxDuration = "60s")
    void theFastPathDecodesAsNettyDoes(byte[] data) {
        if (data.length < 3) {
            return;
        }
        // first byte: the limits; next two: two cut points
        HttpDecoderConfig config = (data[0] & 1) == 0 ? DEFAULT : SMALL;
        byte[] in = Arrays.copyOfRange(data, 3, data.length);
        int[] cuts = {in.length == 0 ? 0 : (data[1] & 0xFF) % (in.length + 1), in.length == 0 ? 0 : (data[2] & 0xFF) % (in.length + 1)};
        Arrays.sort(cuts);
        SimpleRequestHeadTest.Decoded fast = SimpleRequestHeadTest.decode(in, cuts, true, config);
        SimpleRequestHeadTest.Decoded netty = SimpleRequestHeadTest.decode(in, cuts, false, config);
        assertEquals(netty.messages(), fast.messages(), () -> "input " + SimpleRequestHeadTest.escape(in));
    }
}
