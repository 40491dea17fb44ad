package io.doubleface.redis;

/** A child JVM for {@link RedisServersTest}: starts one redis-server, prints its pid, waits to be killed. */
public final class OrphanProbe {

    private OrphanProbe() {}

    public static void main(String[] args) throws Exception {
        RedisServers s = RedisServers.start(1, 0);
        System.out.println("pid " + s.pid(0));
        System.out.flush();
        Thread.sleep(120_000);
        s.close();
    }
}
