package io.doubleface.kv;

import io.doubleface.testing.Outcomes;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.doubleface.driver.spi.BlockingClient;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The leaf server over raw sockets: the wire format, malformed input, lifecycle. */
class KvLeafServerTest {

    private static final int RECORDS = 50;

    private KvLeafServer leaf;

    @BeforeEach
    void start() {
        leaf = KvLeafServer.builder().shards(2).records(RECORDS).start();
    }

    @AfterEach
    void stop() {
        leaf.close();
    }

    private Socket connect(int shard) throws IOException {
        Socket s = new Socket(InetAddress.getLoopbackAddress(), leaf.port(shard));
        s.setSoTimeout((int) TimeUnit.SECONDS.toMillis(Outcomes.HANG_SECONDS)); // hang protection only
        return s;
    }

    private static byte[] request(int id, int op, long key, int field, int count) {
        byte[] b = new byte[KvProtocol.REQUEST_FRAME_LENGTH];
        KvProtocol.putInt(b, 0, KvProtocol.REQUEST_BODY_LENGTH);
        KvProtocol.putInt(b, 4, id);
        b[8] = (byte) op;
        for (int i = 0; i < 8; i++) {
            b[9 + i] = (byte) (key >>> (56 - 8 * i));
        }
        b[17] = (byte) field;
        b[18] = (byte) (count >>> 8);
        b[19] = (byte) count;
        return b;
    }

    /** Reads one response frame: {id, status, payload}. */
    private static Object[] response(InputStream in) throws IOException {
        DataInputStream d = new DataInputStream(in);
        int length = d.readInt();
        int id = d.readInt();
        int status = d.readUnsignedByte();
        byte[] payload = new byte[length - KvProtocol.RESPONSE_HEADER_LENGTH];
        d.readFully(payload);
        return new Object[] {id, status, payload};
    }

    /** Whether the server closed the connection: the next read sees end of stream (or a reset). */
    private static boolean closedByServer(Socket s) throws IOException {
        try {
            return s.getInputStream().read() < 0;
        } catch (SocketException reset) {
            return true;
        }
    }

    private void assertStillServes() throws IOException {
        try (Socket s = connect(1)) {
            s.getOutputStream().write(request(7, KvProtocol.OP_READ, 3, 2, 1));
            Object[] r = response(s.getInputStream());
            assertEquals(7, r[0]);
            assertEquals(KvProtocol.STATUS_OK, r[1]);
            assertArrayEquals(TestShards.expected(KvRequest.readField(3, 2), RECORDS), (byte[]) r[2]);
        }
    }

    @Test
    void pipelinedRequestsInOneWriteAreAnsweredInOrderWithTheirIds() throws IOException {
        try (Socket s = connect(0)) {
            ByteArrayOutputStream batch = new ByteArrayOutputStream();
            batch.write(request(1, KvProtocol.OP_READ, 4, -1, 1));
            batch.write(request(2, KvProtocol.OP_SCAN, 48, -1, 5));
            batch.write(request(3, KvProtocol.OP_READ, RECORDS, 0, 1));
            batch.write(request(4, KvProtocol.OP_READ, -1, 0, 1));
            s.getOutputStream().write(batch.toByteArray());
            InputStream in = s.getInputStream();
            Object[] r1 = response(in);
            Object[] r2 = response(in);
            Object[] r3 = response(in);
            Object[] r4 = response(in);
            assertEquals(1, r1[0]);
            assertArrayEquals(TestShards.expected(KvRequest.readRecord(4), RECORDS), (byte[]) r1[2]);
            assertEquals(2, r2[0]);
            assertArrayEquals(TestShards.expected(KvRequest.scan(48, 5), RECORDS), (byte[]) r2[2]);
            assertEquals(3, r3[0]);
            assertEquals(KvProtocol.STATUS_NOT_FOUND, r3[1]);
            assertEquals(4, r4[0]);
            assertEquals(KvProtocol.STATUS_BAD_REQUEST, r4[1]);
            assertTrue(new String((byte[]) r4[2], StandardCharsets.UTF_8).contains("key -1"));
        }
    }

    @Test
    void garbageBytesCloseThatConnectionAndTheServerKeepsServingOthers() throws IOException {
        try (Socket s = connect(0)) {
            s.getOutputStream().write("GET / HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            assertTrue(closedByServer(s));
        }
        assertStillServes();
    }

    @Test
    void oversizedLengthClosesThatConnectionWithoutWaitingForTheBody() throws IOException {
        try (Socket s = connect(0)) {
            byte[] b = new byte[4];
            KvProtocol.putInt(b, 0, KvProtocol.MAX_REQUEST_LENGTH + 1);
            s.getOutputStream().write(b);
            assertTrue(closedByServer(s));
        }
        assertStillServes();
    }

    @Test
    void unknownOpClosesThatConnectionAfterAnsweringTheRequestsBeforeIt() throws IOException {
        try (Socket s = connect(0)) {
            ByteArrayOutputStream batch = new ByteArrayOutputStream();
            batch.write(request(1, KvProtocol.OP_READ, 1, 1, 1));
            batch.write(request(2, 9, 1, 1, 1));
            s.getOutputStream().write(batch.toByteArray());
            Object[] r1 = response(s.getInputStream());
            assertEquals(1, r1[0]);
            assertTrue(closedByServer(s));
        }
        assertStillServes();
    }

    @Test
    void fieldOrCountOutOfRangeClosesThatConnection() throws IOException {
        byte[][] bad = {
            request(1, KvProtocol.OP_READ, 1, Records.FIELD_COUNT, 1),
            request(1, KvProtocol.OP_READ, 1, -2, 1),
            request(1, KvProtocol.OP_READ, 1, 0, 2),
            request(1, KvProtocol.OP_SCAN, 1, -1, 0),
            request(1, KvProtocol.OP_SCAN, 1, -1, KvRequest.MAX_SCAN + 1),
        };
        for (byte[] b : bad) {
            try (Socket s = connect(0)) {
                s.getOutputStream().write(b);
                assertTrue(closedByServer(s));
            }
        }
        assertStillServes();
    }

    @Test
    void requestSplitAcrossWritesIsAnsweredOnceComplete() throws Exception {
        try (Socket s = connect(0)) {
            byte[] r = request(5, KvProtocol.OP_SCAN, 10, 3, 4);
            for (byte b : r) {
                s.getOutputStream().write(b);
                s.getOutputStream().flush();
            }
            Object[] resp = response(s.getInputStream());
            assertEquals(5, resp[0]);
            assertArrayEquals(TestShards.expected(new KvRequest(KvRequest.Op.SCAN, 10, 3, 4), RECORDS), (byte[]) resp[2]);
        }
    }

    @Test
    void clientClosedBeforeReadingAllRepliesDoesNotDisturbTheServer() throws IOException {
        try (Socket s = connect(0)) {
            ByteArrayOutputStream batch = new ByteArrayOutputStream();
            for (int i = 0; i < 200; i++) {
                batch.write(request(i, KvProtocol.OP_SCAN, i % RECORDS, -1, KvRequest.MAX_SCAN));
            }
            s.getOutputStream().write(batch.toByteArray());
            // close without reading: ~200 MB of replies have nowhere to go
        }
        assertStillServes();
    }

    @Test
    void eachShardListensOnItsOwnPortAndDescribesItself() throws IOException {
        assertNotEquals(leaf.port(0), leaf.port(1));
        assertEquals(2, leaf.ports().length);
        ByteArrayOutputStream text = new ByteArrayOutputStream();
        leaf.printListening(new PrintStream(text, true, StandardCharsets.UTF_8));
        String expected = "listening on " + KvDriver.describe(leaf.addresses()).substring("kv://".length())
                + " (2 shards, 50 records)" + System.lineSeparator();
        assertEquals(expected, text.toString(StandardCharsets.UTF_8));
        assertEquals(leaf.addresses(), KvDriver.parse(leaf.uri()));
    }

    @Test
    void contiguousBasePortGivesAPortRangeInTheListeningMessage() throws IOException {
        int base;
        try (ServerSocket probe = new ServerSocket(0)) {
            base = probe.getLocalPort(); // free a moment ago; ports just above are very likely free too
        }
        try (KvLeafServer ranged = KvLeafServer.builder().shards(3).basePort(base).records(1000).start()) {
            assertEquals("listening on 127.0.0.1:" + base + "-" + (base + 2) + " (3 shards, 1000 records)",
                    ranged.listeningMessage());
            assertEquals(base + 1, ranged.port(1));
        } catch (IllegalStateException portTaken) {
            // another process took one of the ports; nothing this test can check then
            assertTrue(portTaken.getMessage().contains("cannot listen"), portTaken.getMessage());
        }
    }

    @Test
    void portAlreadyInUseFailsStartWithTheShardAndPort() {
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> KvLeafServer.builder().shards(1).basePort(leaf.port(0)).start());
        assertTrue(e.getMessage().contains("kv shard 0: cannot listen on 127.0.0.1:" + leaf.port(0)), e.getMessage());
    }

    @Test
    void builderRejectsBadSettingsWithTheSettingInTheMessage() {
        assertEquals("shards: 0 (expected: 1..4096)",
                assertThrows(IllegalArgumentException.class, () -> KvLeafServer.builder().shards(0)).getMessage());
        assertTrue(assertThrows(IllegalArgumentException.class, () -> KvLeafServer.builder().records(0))
                .getMessage().startsWith("records: 0"));
        assertTrue(assertThrows(IllegalArgumentException.class,
                () -> KvLeafServer.builder().shards(10).basePort(65530).start()).getMessage().startsWith("basePort: 65530"));
    }

    @Test
    void blockingClientReadsEveryRecordOfTheKeySpaceByteIdentical() throws Exception {
        try (KvDriver driver = KvDriver.of(leaf.addresses())) {
            BlockingClient client = driver.openBlocking();
            for (int key = 0; key < RECORDS; key++) {
                ByteBuf b = (ByteBuf) client.call(key % 2, KvRequest.readRecord(key), TimeUnit.SECONDS.toNanos(30));
                try {
                    assertArrayEquals(TestShards.expected(KvRequest.readRecord(key), RECORDS), ByteBufUtil.getBytes(b));
                } finally {
                    b.release();
                }
            }
        }
    }
}
