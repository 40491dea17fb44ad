package io.doubleface.cli;

import io.doubleface.kv.KvLeafServer;

/** Host strings for printed URLs and banners. */
final class Hosts {

    private Hosts() {}

    /**
     * The host to put in a URL a user can paste: a wildcard listen address becomes loopback, an
     * IPv6 literal gets brackets.
     */
    static String forUrl(String listenHost) {
        if (listenHost.equals("0.0.0.0") || listenHost.equals("::") || listenHost.equals("[::]")) {
            return "127.0.0.1";
        }
        if (listenHost.indexOf(':') >= 0 && !listenHost.startsWith("[")) {
            return "[" + listenHost + "]";
        }
        return listenHost;
    }

    /**
     * A short description of a leaf for banners: {@code 20 shards on 127.0.0.1 (ports 7101-7120),
     * 1000 records each}; ephemeral ports are summarised rather than listed.
     */
    static String describe(KvLeafServer leaf) {
        int[] ports = leaf.ports();
        boolean consecutive = true;
        for (int i = 1; i < ports.length; i++) {
            consecutive &= ports[i] == ports[0] + i;
        }
        String where = ports.length == 1 ? "port " + ports[0]
                : consecutive ? "ports " + ports[0] + "-" + ports[ports.length - 1] : "free ports";
        return ports.length + (ports.length == 1 ? " shard" : " shards") + " on " + leaf.host() + " (" + where + "), "
                + leaf.records() + " records each";
    }
}
