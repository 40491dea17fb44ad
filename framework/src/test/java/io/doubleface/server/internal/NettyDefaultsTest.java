package io.doubleface.server.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.doubleface.server.FanoutServer;
import org.junit.jupiter.api.Test;

/** {@link NettyDefaults}: doubleface's Netty settings where the user set none, the user's where they did. */
class NettyDefaultsTest {

    @Test
    void setsTheChunkReuseQueueOnlyWhereTheUserDidNot() {
        String before = System.getProperty(NettyDefaults.CHUNK_REUSE_PROPERTY);
        try {
            System.clearProperty(NettyDefaults.CHUNK_REUSE_PROPERTY);
            NettyDefaults.apply();
            assertEquals(String.valueOf(NettyDefaults.CHUNK_REUSE_QUEUE),
                    System.getProperty(NettyDefaults.CHUNK_REUSE_PROPERTY));
            System.setProperty(NettyDefaults.CHUNK_REUSE_PROPERTY, "8");
            NettyDefaults.apply();
            assertEquals("8", System.getProperty(NettyDefaults.CHUNK_REUSE_PROPERTY), "the user's value stays");
        } finally {
            if (before == null) {
                System.clearProperty(NettyDefaults.CHUNK_REUSE_PROPERTY);
            } else {
                System.setProperty(NettyDefaults.CHUNK_REUSE_PROPERTY, before);
            }
        }
    }

    @Test
    void theServerClassAppliesThemWhenItIsInitialised() {
        FanoutServer.builder(); // initialises FanoutServer (if no earlier test did)
        String v = System.getProperty(NettyDefaults.CHUNK_REUSE_PROPERTY);
        // set by FanoutServer's initialisation, or by the test above, never removed by either
        assertEquals(String.valueOf(NettyDefaults.CHUNK_REUSE_QUEUE), v == null ? "unset" : v);
    }
}
