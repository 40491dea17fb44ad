package io.doubleface.services.social;

import io.doubleface.api.Backend;
import io.doubleface.api.FanoutPlan;
import io.doubleface.api.FanoutService;
import io.doubleface.api.Replies;
import io.doubleface.api.CallHandler;
import io.doubleface.api.CallRef;
import io.doubleface.mongo.Mongo;
import io.doubleface.mongo.MongoCommand;
import io.doubleface.redis.Redis;
import io.doubleface.redis.RedisCommand;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.function.LongSupplier;
import org.bson.BsonValue;

/**
 * compose-post: stores a post and puts its id on the home timeline of every follower of its author.
 *
 * <pre>
 *   plan     id = ids.next(), ts = clock
 *   round 0  insertOne posts {_id: id, author, ts, text}   on the post's MongoDB shard
 *            SMEMBERS followers:U                          on U's Redis shard (in parallel)
 *            onReply: the followers parsed and grouped by Redis shard, in batches of keysPerCall
 *   round 1… EVAL "ZADD each KEYS[i] ts id" k timeline:F1 … timeline:Fk ts id
 *            one call per batch, at most callsPerRound calls per round (the rest in later rounds)
 *   merge    {id, ts, followers}
 * </pre>
 *
 * <p>One {@code EVAL} per batch writes a batch of a shard's timelines in one round trip and one call
 * (the Lua script runs {@code ZADD} for each key), so a post by a user with 800 followers over 4
 * Redis shards costs 4 calls, not 800. {@code ZADD} of a member already present only updates its
 * score, so a timeline holds a post once however often it is written.
 *
 * <p><b>Order and failures.</b> The post is stored before its id reaches any timeline (its round
 * comes first), so a timeline never lists a post that cannot be read. Fail fast: if the insert or
 * the follower read fails, nothing reached a timeline; if a timeline batch fails, the post is
 * stored and on the timelines of the batches that succeeded. Either way the answer is {@code 503
 * backend NAME: shard N KIND: …} ({@code 504} at the deadline) and the client may post again (a new id).
 *
 * <p>Thread-safe: {@link #plan} draws the id from a thread-safe {@link PostIds}; a {@link Request}
 * is written by plan and merge only, and read by the handlers of the round after.
 */
public final class ComposeService implements FanoutService<ComposeService.Request, Object, Composed> {

    /** Longest post text: {@value} characters. */
    public static final int MAX_TEXT = 280;
    /** Default timelines written by one {@code EVAL}: {@value}. */
    public static final int DEFAULT_KEYS_PER_CALL = 256;

    /** The script of a timeline batch: {@code ZADD KEYS[i] ARGV[1] ARGV[2]} for each key; replies the key count. */
    static final String ZADD_EACH = "for i=1,#KEYS do redis.call('ZADD',KEYS[i],ARGV[1],ARGV[2]) end return #KEYS";

    private static final Redis<String, String> REDIS = Redis.utf8();

    /**
     * How the fanout is cut into calls and rounds, and where ids and times come from.
     *
     * @param ids the post ids
     * @param clock the posts' times, ms since the epoch ({@link System#currentTimeMillis} in production)
     * @param keysPerCall timelines per {@code EVAL}, {@code >= 1}
     * @param callsPerRound {@code EVAL} calls per round, {@code 1 ..} {@link FanoutPlan#MAX_CALLS}; a post
     *     needs {@code ceil(batches / callsPerRound)} timeline rounds, and a request has at most 64 rounds
     *     (the framework's limit), so the defaults cover 63 × 1024 × 256 followers
     */
    public record Settings(PostIds ids, LongSupplier clock, int keysPerCall, int callsPerRound) {
        /** Checks the ranges. */
        public Settings {
            java.util.Objects.requireNonNull(ids, "ids");
            java.util.Objects.requireNonNull(clock, "clock");
            if (keysPerCall < 1) {
                throw new IllegalArgumentException("keysPerCall: " + keysPerCall + " (expected: > 0)");
            }
            if (callsPerRound < 1 || callsPerRound > FanoutPlan.MAX_CALLS) {
                throw new IllegalArgumentException("callsPerRound: " + callsPerRound + " (expected: 1.."
                        + FanoutPlan.MAX_CALLS + ")");
            }
        }

        /**
         * Production settings: the wall clock, {@value #DEFAULT_KEYS_PER_CALL} timelines per call, up
         * to {@link FanoutPlan#MAX_CALLS} calls per round.
         *
         * @param ids the post ids
         * @return the settings
         */
        public static Settings of(PostIds ids) {
            return new Settings(ids, System::currentTimeMillis, DEFAULT_KEYS_PER_CALL, FanoutPlan.MAX_CALLS);
        }
    }

    /** A decoded request; the rest is written by plan and merge. */
    public static final class Request {
        final int user;
        final String text;
        long id;
        long ts;
        int followers;
        /** The timeline batches (round 0's merge) and how many were sent. */
        List<Batch> batches = List.of();
        int sent;

        /**
         * A request.
         *
         * @param user the author, checked by the binding
         * @param text the text, checked by the binding
         */
        public Request(int user, String text) {
            this.user = user;
            this.text = text;
        }
    }

    /** Timelines of one Redis shard written by one call. */
    record Batch(int shard, List<String> keys) {}

    /** Round 0's follower reply, processed. */
    record Followers(int count, List<Batch> batches) {}

    private static final CallRef<BsonValue> STORED = CallRef.named("stored");
    private static final CallRef<Followers> FOLLOWERS = CallRef.named("followers");
    private static final CallRef<Long> ADDED = CallRef.named("added");

    private static final CallHandler<Request, BsonValue, BsonValue> CHECK_STORED = (call, id) -> {
        long post = call.request().id;
        if (id == null || !id.isInt64() || id.asInt64().getValue() != post) {
            throw new IllegalStateException("insert of post " + post + " answered _id " + id);
        }
        return id;
    };

    private final Backend<RedisCommand<?>> redis;
    private final Backend<MongoCommand<?>> mongo;
    private final Settings settings;
    // per-reply work, round 0: the follower set to batches of timeline keys per Redis shard
    private final CallHandler<Request, Set<String>, Followers> followers = (call, members) -> batches(members);

    /**
     * The service over its two backends.
     *
     * @param redis the timelines and follower sets
     * @param mongo the posts
     * @param settings ids, clock and batching
     */
    public ComposeService(Backend<RedisCommand<?>> redis, Backend<MongoCommand<?>> mongo, Settings settings) {
        this.redis = redis;
        this.mongo = mongo;
        this.settings = settings;
    }

    @Override
    public void plan(Request q, FanoutPlan<Request, Object> plan) {
        q.id = settings.ids().next();
        q.ts = settings.clock().getAsLong();
        Post post = new Post(q.id, q.user, q.ts, q.text);
        plan.call(mongo, SocialLayout.mongoShard(q.id, mongo.shardCount()), Mongo.insertOne(SocialLayout.POSTS,
                post.toBson()).inDatabase(SocialLayout.DATABASE), STORED, CHECK_STORED);
        plan.call(redis, SocialLayout.redisShard(q.user, redis.shardCount()),
                REDIS.smembers(SocialLayout.followersKey(q.user)), FOLLOWERS, followers);
    }

    private Followers batches(Set<String> members) {
        int[] users = new int[members.size()];
        int n = 0;
        for (String m : members) {
            users[n++] = Integer.parseInt(m);
        }
        Arrays.sort(users);
        int shards = redis.shardCount();
        List<List<String>> byShard = new ArrayList<>(shards);
        for (int s = 0; s < shards; s++) {
            byShard.add(new ArrayList<>());
        }
        for (int u : users) {
            byShard.get(SocialLayout.redisShard(u, shards)).add(SocialLayout.timelineKey(u));
        }
        List<Batch> out = new ArrayList<>();
        int per = settings.keysPerCall();
        for (int s = 0; s < shards; s++) {
            List<String> keys = byShard.get(s);
            for (int from = 0; from < keys.size(); from += per) {
                out.add(new Batch(s, List.copyOf(keys.subList(from, Math.min(keys.size(), from + per)))));
            }
        }
        return new Followers(users.length, out);
    }

    @Override
    public Composed merge(Request q, Replies<Object> replies, FanoutPlan<Request, Object> next) {
        if (replies.round() == 0) {
            Followers f = replies.get(FOLLOWERS);
            q.followers = f.count();
            q.batches = f.batches();
        }
        if (q.sent == q.batches.size()) {
            return new Composed(q.id, q.ts, q.followers);
        }
        String score = Long.toString(q.ts);
        String member = Long.toString(q.id);
        int end = Math.min(q.batches.size(), q.sent + settings.callsPerRound());
        for (; q.sent < end; q.sent++) {
            Batch b = q.batches.get(q.sent);
            next.call(redis, b.shard(), zaddEach(b.keys(), score, member), ADDED);
        }
        return null;
    }

    /** {@return {@code EVAL ZADD_EACH n key… score member}} */
    static RedisCommand<Long> zaddEach(List<String> keys, String score, String member) {
        return REDIS.eval(ZADD_EACH, Redis.ScriptReply.INTEGER, keys.toArray(String[]::new), score, member);
    }
}
