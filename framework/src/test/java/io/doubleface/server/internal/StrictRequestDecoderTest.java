package io.doubleface.server.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The obs-fold rule of {@link StrictRequestDecoder}, whatever the reads' boundaries. */
class StrictRequestDecoderTest {

    /** Feeds {@code text} in reads of {@code chunk} bytes; returns whether each decoded head failed with obs-fold. */
    static List<Boolean> heads(String text, int chunk) {
        EmbeddedChannel ch = new EmbeddedChannel(StrictRequestDecoder.codec(new HttpDecoderConfig()));
        byte[] b = text.getBytes(StandardCharsets.US_ASCII);
        for (int i = 0; i < b.length; i += chunk) {
            ch.writeInbound(Unpooled.copiedBuffer(b, i, Math.min(chunk, b.length - i)));
        }
        List<Boolean> out = new ArrayList<>();
        Object m;
        while ((m = ch.readInbound()) != null) {
            if (m instanceof HttpRequest r) {
                boolean folded = r.decoderResult().isFailure();
                if (folded) {
                    assertInstanceOf(StrictRequestDecoder.ObsFoldException.class, r.decoderResult().cause());
                }
                out.add(folded);
            }
            ReferenceCountUtil.release(m);
        }
        ch.finishAndReleaseAll();
        return out;
    }

    @Test
    void aFoldIsFoundAtEveryReadBoundaryAndOnlyInHeads() {
        String good = "GET /a HTTP/1.1\r\nHost: h\r\nX-A: b c\r\n\r\n";
        String foldTab = "GET /a HTTP/1.1\r\nHost: h\r\nX-A: b\r\n\tc\r\n\r\n";
        String foldSpace = "GET /a HTTP/1.1\r\nX-A: b\r\n c\r\nHost: h\r\n\r\n";
        String body = "{\r\n  \"a\": 1\r\n}";
        String withBody = "POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: " + body.length() + "\r\n\r\n" + body;
        String leadingBlankLines = "\r\n\r\n" + good;
        for (int chunk : new int[] {1, 2, 3, 7, 1000}) {
            assertEquals(List.of(false), heads(good, chunk), "chunk " + chunk);
            assertEquals(List.of(true), heads(foldTab, chunk), "chunk " + chunk);
            assertEquals(List.of(true), heads(foldSpace, chunk), "chunk " + chunk);
            assertEquals(List.of(false, false), heads(withBody + good, chunk), "chunk " + chunk);
            assertEquals(List.of(false, true), heads(withBody + foldTab, chunk), "chunk " + chunk);
            assertEquals(List.of(false, false), heads(good + leadingBlankLines, chunk), "chunk " + chunk);
        }
    }
}
