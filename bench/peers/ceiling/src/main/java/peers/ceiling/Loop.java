package peers.ceiling;

import io.netty.channel.SingleThreadEventLoop;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import peers.Workload;

/**
 * One event loop's state: its connection to each shard, and what needs flushing at the end of the
 * current iteration (the shard connections that were written to, the HTTP connections that were
 * answered). Confined to its loop.
 */
final class Loop implements Runnable {

    /** The RESP {@code GET} command of every key, encoded once: {@code [large][key]}. */
    private static final byte[][][] GET = new byte[2][Workload.KEYS][];

    static {
        for (int large = 0; large < 2; large++) {
            for (int i = 0; i < Workload.KEYS; i++) {
                String key = (large == 1 ? "l:" : "s:") + i;
                GET[large][i] = ("*2\r\n$3\r\nGET\r\n$" + key.length() + "\r\n" + key + "\r\n").getBytes(StandardCharsets.US_ASCII);
            }
        }
    }

    /**
     * Cluster workload: the master holding each key, {@code [large][key]} (from {@link ClusterSlots}); {@code null}
     * for the standalone workload.
     */
    static int[][] owner;

    /** Reads the cluster's slot map and places every key of the workload on its master. */
    static void routeByCluster(int basePort, int masters) throws java.io.IOException {
        int[] slots = ClusterSlots.owners(basePort, masters);
        int[][] o = new int[2][Workload.KEYS];
        for (int large = 0; large < 2; large++) {
            for (int i = 0; i < Workload.KEYS; i++) {
                o[large][i] = slots[ClusterSlots.slot(((large == 1 ? "l:" : "s:") + i).getBytes(StandardCharsets.US_ASCII))];
            }
        }
        owner = o;
    }

    /** {@return the RESP {@code GET} of key index {@code key}} */
    static byte[] getCommand(boolean large, int key) {
        return GET[large ? 1 : 0][key];
    }

    final SingleThreadEventLoop loop;
    final Shard[] shards;
    private final ArrayList<Shard> dirtyShards = new ArrayList<>();
    private final ArrayList<HttpConn> dirtyConns = new ArrayList<>();
    private boolean scheduled;

    Loop(SingleThreadEventLoop loop, int shards) {
        this.loop = loop;
        this.shards = new Shard[shards];
    }

    static byte[] getCommand(Workload.Query q) {
        return GET[q.large() ? 1 : 0][q.key()];
    }

    void dirty(Shard s) {
        dirtyShards.add(s);
        schedule();
    }

    void dirty(HttpConn c) {
        dirtyConns.add(c);
        schedule();
    }

    private void schedule() {
        if (!scheduled) {
            scheduled = true;
            loop.executeAfterEventLoopIteration(this);
        }
    }

    /** The end of the iteration: one flush per written shard connection, then per answered client. */
    @Override
    public void run() {
        scheduled = false;
        for (int i = 0; i < dirtyShards.size(); i++) {
            dirtyShards.get(i).flush();
        }
        dirtyShards.clear();
        for (int i = 0; i < dirtyConns.size(); i++) {
            dirtyConns.get(i).flush();
        }
        dirtyConns.clear();
    }
}
