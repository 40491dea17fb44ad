package io.doubleface.cli;

import io.doubleface.mongo.MongoLeafServer;
import io.doubleface.redis.RedisServers;
import io.doubleface.services.social.SocialData;
import io.doubleface.services.social.SocialLoader;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code doubleface leaf social}: the social network's shards — real {@code redis-server} processes
 * ({@link RedisServers}) and embedded mongo-java-server shards ({@link MongoLeafServer}) — loaded
 * with the seeded graph and posts, until SIGINT/SIGTERM.
 */
@Command(name = "social",
        mixinStandardHelpOptions = true,
        versionProvider = VersionProvider.class,
        sortOptions = false,
        showDefaultValues = true,
        header = "Runs the social network's shards: redis-server processes and embedded MongoDB, loaded with the data.",
        description = {
            "Starts --redis-shards redis-server processes (as leaf redis: $DOUBLEFACE_REDIS_SERVER, else "
                + "redis-server on PATH, else the embedded-redis binary; shard i on --redis-base-port + i) and "
                + "--mongo-shards mongo-java-server shards (memory backend, shard i on --mongo-base-port + i), "
                + "loads the seeded social graph (timeline:U sorted sets and followers:U sets on U's Redis shard, "
                + "the posts in social.posts on each post's MongoDB shard), prints the two shard lists for "
                + "doubleface serve social, then runs until Ctrl-C (SIGINT) or SIGTERM. See docs/services.md.",
            ""},
        footer = {"", "Example:", "  doubleface leaf social --redis-shards 4 --mongo-shards 4 --users 1000",
            "  doubleface serve social --redis redis://127.0.0.1:7401-7404 --mongo mongodb://127.0.0.1:7501-7504",
            "", "Exit codes: 0 stopped by Ctrl-C/SIGTERM, 1 failure at run time (a port in use, no redis-server, "
                + "loading failed), 2 usage error."})
final class LeafSocialCommand implements Callable<Integer> {

    /** Default Redis shards: {@value}. */
    static final int DEFAULT_REDIS_SHARDS = 4;
    /** Default MongoDB shards: {@value}. */
    static final int DEFAULT_MONGO_SHARDS = 4;
    /** Default port of Redis shard 0: {@value}. */
    static final int DEFAULT_REDIS_BASE_PORT = 7401;
    /** Default port of MongoDB shard 0: {@value}. */
    static final int DEFAULT_MONGO_BASE_PORT = 7501;

    private final CliEnv env;

    @Spec
    CommandSpec spec;

    @Option(names = "--redis-shards", paramLabel = "N", description = "Redis shards (one redis-server each).")
    int redisShards = DEFAULT_REDIS_SHARDS;

    @Option(names = "--mongo-shards", paramLabel = "N", description = "MongoDB shards (one port each).")
    int mongoShards = DEFAULT_MONGO_SHARDS;

    @Option(names = "--redis-base-port", paramLabel = "PORT",
            description = "Port of Redis shard 0; shard i listens on PORT+i. 0 = any free ports.")
    int redisBasePort = DEFAULT_REDIS_BASE_PORT;

    @Option(names = "--mongo-base-port", paramLabel = "PORT",
            description = "Port of MongoDB shard 0; shard i listens on PORT+i. 0 = any free ports.")
    int mongoBasePort = DEFAULT_MONGO_BASE_PORT;

    @Option(names = "--host", paramLabel = "ADDRESS", description = "Address the shards listen on.")
    String host = "127.0.0.1";

    @Option(names = "--ready-file", paramLabel = "FILE", description = "Once loaded, write the shard lists as one "
            + "JSON object to FILE (written whole, then renamed into place): {\"redis\":URI, \"mongo\":URI, "
            + "\"pid\":…}. For programs that start the shards.")
    Path readyFile;

    @Mixin
    SocialOptions social;

    LeafSocialCommand(CliEnv env) {
        this.env = env;
    }

    @Override
    public Integer call() {
        SocialData data = social.data();
        if (redisShards < 1) {
            throw new ParameterException(spec.commandLine(), "--redis-shards: " + redisShards + " (expected: > 0)");
        }
        if (readyFile != null && ReadyFile.problem(readyFile) != null) {
            throw new ParameterException(spec.commandLine(), ReadyFile.problem(readyFile));
        }
        RedisServers redis;
        MongoLeafServer mongo;
        try {
            redis = RedisServers.start(redisShards, redisBasePort, host);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), "--redis-shards/--redis-base-port: " + e.getMessage(), e);
        } catch (IllegalStateException e) {
            throw new CliException(e.getMessage(), e);
        }
        try {
            mongo = MongoLeafServer.builder().shards(mongoShards).basePort(mongoBasePort).host(host).start();
        } catch (IllegalArgumentException e) {
            redis.close();
            throw new ParameterException(spec.commandLine(), "--mongo-shards/--mongo-base-port: " + e.getMessage(), e);
        } catch (IllegalStateException e) {
            redis.close();
            throw new CliException(e.getMessage(), e);
        }
        try {
            SocialLoader.load(redis.uri(), mongo.uri(), data);
        } catch (RuntimeException e) {
            mongo.close();
            redis.close();
            throw new CliException(e.getMessage(), e);
        }
        env.out().println("social leaf: " + data);
        env.out().println("  redis    " + redis.uri() + " (" + redisShards + " redis-server processes)");
        env.out().println("  mongo    " + mongo.uri() + " (" + mongoShards + " mongo-java-server shards)");
        env.out().println("  serve    doubleface serve social --redis " + redis.uri() + " --mongo " + mongo.uri()
                + " --users " + social.users + " --followees " + social.followees + " --posts-per-user "
                + social.postsPerUser + " --popularity " + social.popularity + " --seed " + social.seed);
        env.out().flush();
        if (readyFile != null) {
            ReadyFile.write(readyFile, Map.of("redis", redis.uri(), "mongo", mongo.uri()));
        }
        env.listener().mongoLeafStarted(mongo);
        env.stop().awaitThenClose(mongo, redis);
        return DoubleFaceCli.EXIT_OK;
    }
}
