package io.doubleface.driver.spi;

import io.netty.util.NetUtil;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

/**
 * Shard lists in URI form, shared by every driver: {@code SCHEME://host:first-last} (a port range,
 * one shard per port) or {@code SCHEME://host:port,host:port,...}; a comma list may also hold
 * ranges. Hosts may be names, IPv4 addresses or bracketed IPv6 addresses ({@code [::1]:7101}).
 * Shard {@code i} is the {@code i}-th address in list order.
 */
public final class ShardAddresses {

    private ShardAddresses() {}

    /**
     * Reads a shard list with the given scheme.
     *
     * @param scheme e.g. {@code "kv"}, {@code "redis"} (without {@code ://})
     * @param uri the shard list, e.g. {@code kv://127.0.0.1:7101-7120}; ports {@code 1..65535}
     * @return the shard addresses, shard {@code i} at index {@code i}; at least one. Host names are
     *     resolved here (a name that does not resolve gives an unresolved address, not an error)
     * @throws IllegalArgumentException if {@code uri} is not such a list
     */
    public static List<InetSocketAddress> parse(String scheme, String uri) {
        String prefix = scheme + "://";
        if (uri == null || !uri.startsWith(prefix) || uri.length() == prefix.length()) {
            throw badList(scheme, uri, null);
        }
        List<InetSocketAddress> out = new ArrayList<>();
        for (String part : uri.substring(prefix.length()).split(",", -1)) {
            int colon = part.lastIndexOf(':');
            if (colon <= 0 || part.endsWith("]")) {
                throw badList(scheme, uri, "'" + part + "' has no port");
            }
            String host = part.substring(0, colon);
            if (host.startsWith("[") && host.endsWith("]")) {
                host = host.substring(1, host.length() - 1);
            }
            if (host.isEmpty() || host.indexOf('[') >= 0 || host.indexOf(']') >= 0 || host.indexOf('/') >= 0) {
                throw badList(scheme, uri, "bad host '" + host + "'");
            }
            String ports = part.substring(colon + 1);
            int dash = ports.indexOf('-');
            int first = port(scheme, uri, dash < 0 ? ports : ports.substring(0, dash));
            int last = dash < 0 ? first : port(scheme, uri, ports.substring(dash + 1));
            if (last < first) {
                throw badList(scheme, uri, "port range " + ports + " is empty");
            }
            for (int p = first; p <= last; p++) {
                out.add(new InetSocketAddress(host, p));
            }
        }
        return out;
    }

    /**
     * The compact shard list of {@code shards}: port ranges where ports are consecutive, else a
     * comma list; {@code parse(scheme, describe(scheme, list))} gives {@code list} back.
     *
     * @param scheme e.g. {@code "kv"}, {@code "redis"} (without {@code ://})
     * @param shards the shard addresses, in shard order
     * @return the shard list in URI form, e.g. {@code kv://127.0.0.1:7101-7120}
     */
    public static String describe(String scheme, List<InetSocketAddress> shards) {
        StringBuilder sb = new StringBuilder(scheme).append("://");
        int i = 0;
        while (i < shards.size()) {
            InetSocketAddress a = shards.get(i);
            int j = i;
            while (j + 1 < shards.size() && shards.get(j + 1).getHostString().equals(a.getHostString())
                    && shards.get(j + 1).getPort() == shards.get(j).getPort() + 1) {
                j++;
            }
            if (i > 0) {
                sb.append(',');
            }
            String host = a.getHostString();
            if (host.indexOf(':') >= 0 && a.getAddress() != null) {
                host = NetUtil.toAddressString(a.getAddress()); // ::1, not 0:0:0:0:0:0:0:1
            }
            sb.append(host.indexOf(':') >= 0 ? "[" + host + "]" : host).append(':').append(a.getPort());
            if (j > i) {
                sb.append('-').append(shards.get(j).getPort());
            }
            i = j + 1;
        }
        return sb.toString();
    }

    private static int port(String scheme, String uri, String s) {
        if (s.isEmpty() || s.length() > 5) {
            throw badList(scheme, uri, "bad port '" + s + "'");
        }
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) < '0' || s.charAt(i) > '9') {
                throw badList(scheme, uri, "bad port '" + s + "'");
            }
        }
        int p = Integer.parseInt(s);
        if (p < 1 || p > 65535) {
            throw badList(scheme, uri, "port " + p + " out of range 1..65535");
        }
        return p;
    }

    private static IllegalArgumentException badList(String scheme, String uri, String detail) {
        return new IllegalArgumentException(scheme + " shard list: '" + uri + "' (expected: " + scheme
                + "://host:port-port or " + scheme + "://host:port,host:port,...)"
                + (detail == null ? "" : ": " + detail));
    }
}
