package peers.ceiling;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The cluster workload's routing, done once at start: the slot map read with {@code CLUSTER SLOTS} from
 * the first master, and each key's slot (CRC16 of the key, as Redis computes it: the workload's keys have
 * no hash tag). The ceiling does not follow a changing cluster: the benchmark's cluster does not change.
 */
final class ClusterSlots {

    private ClusterSlots() {}

    /** {@return the index of the master serving each slot: its port minus {@code basePort}} */
    static int[] owners(int basePort, int masters) throws IOException {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", basePort), 5000);
            s.setSoTimeout(5000);
            s.getOutputStream().write("*2\r\n$7\r\nCLUSTER\r\n$5\r\nSLOTS\r\n".getBytes(StandardCharsets.US_ASCII));
            Object reply = read(new BufferedInputStream(s.getInputStream()));
            int[] owner = new int[16384];
            Arrays.fill(owner, -1);
            for (Object range : (List<?>) reply) {
                List<?> r = (List<?>) range;
                int port = (int) (long) (Long) ((List<?>) r.get(2)).get(1);
                int master = port - basePort;
                if (master < 0 || master >= masters) {
                    throw new IOException("slot range " + r.get(0) + "-" + r.get(1) + " served by port " + port
                            + ", not one of the masters " + basePort + ".." + (basePort + masters - 1));
                }
                for (long slot = (Long) r.get(0); slot <= (Long) r.get(1); slot++) {
                    owner[(int) slot] = master;
                }
            }
            for (int slot = 0; slot < owner.length; slot++) {
                if (owner[slot] < 0) {
                    throw new IOException("slot " + slot + " is not served");
                }
            }
            return owner;
        }
    }

    /** One RESP2 reply: arrays, integers, bulk and simple strings. */
    private static Object read(InputStream in) throws IOException {
        int type = in.read();
        String line = line(in);
        switch (type) {
            case '*': {
                int n = Integer.parseInt(line);
                List<Object> items = new ArrayList<>(Math.max(0, n));
                for (int i = 0; i < n; i++) {
                    items.add(read(in));
                }
                return items;
            }
            case ':':
                return Long.parseLong(line);
            case '$': {
                int n = Integer.parseInt(line);
                if (n < 0) {
                    return null;
                }
                byte[] b = in.readNBytes(n + 2);
                return new String(b, 0, n, StandardCharsets.UTF_8);
            }
            case '+':
                return line;
            default:
                throw new IOException("CLUSTER SLOTS answered " + (char) type + line);
        }
    }

    private static String line(InputStream in) throws IOException {
        StringBuilder b = new StringBuilder();
        int c;
        while ((c = in.read()) != '\r') {
            if (c < 0) {
                throw new IOException("connection closed");
            }
            b.append((char) c);
        }
        in.read(); // '\n'
        return b.toString();
    }

    /** {@return the Redis Cluster slot of {@code key} (CRC16/XMODEM mod 16384), for keys without a hash tag} */
    static int slot(byte[] key) {
        int crc = 0;
        for (byte b : key) {
            crc ^= (b & 0xff) << 8;
            for (int i = 0; i < 8; i++) {
                crc = (crc & 0x8000) != 0 ? (crc << 1) ^ 0x1021 : crc << 1;
            }
        }
        return (crc & 0xffff) & 16383;
    }
}
