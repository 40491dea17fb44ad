package io.doubleface.mongo;

import com.mongodb.MongoClientSettings;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;
import org.bson.conversions.Bson;
import org.reactivestreams.Publisher;

/**
 * Builds {@link MongoCommand}s: find (filter, projection, sort, limit), aggregate, insert, update,
 * delete and any database command. Documents come back as {@link RawBsonDocument} (no decoding
 * until you read a field), or as the class you name, decoded by the driver's default codec registry
 * ({@code org.bson.Document}, {@code BsonDocument}, …).
 *
 * <pre>{@code
 * // the 20 newest posts of a user, from the shard that holds them
 * plan.call(posts, shard, Mongo.find("posts", Filters.eq("author", user), null, Sorts.descending("ts"), 20), POSTS);
 * plan.call(posts, shard, Mongo.insertOne("posts", new Document("author", user).append("text", text)), INSERTED);
 * }</pre>
 *
 * <p>Filters, projections, sorts and updates are the driver's {@link Bson} builders
 * ({@code com.mongodb.client.model.Filters}, {@code Projections}, {@code Sorts}, {@code Updates}).
 * Thread-safe.
 */
public final class Mongo {

    private Mongo() {}

    /**
     * {@code find(filter)} on {@code collection}: every matching document.
     *
     * @param collection the collection's name, non-empty, in the shard's database (see
     *     {@link MongoCommand#inDatabase})
     * @param filter the query filter, not {@code null}; e.g. {@code Filters.eq("author", user)}, or
     *     {@code new BsonDocument()} for every document
     * @return the command; replies the matching documents in the server's order
     * @throws IllegalArgumentException if {@code collection} is {@code null} or empty
     * @throws NullPointerException if {@code filter} is {@code null}
     */
    public static MongoCommand<List<RawBsonDocument>> find(String collection, Bson filter) {
        return find(collection, filter, null, null, 0);
    }

    /**
     * {@code find(filter).projection(projection).sort(sort).limit(limit)} on {@code collection}.
     *
     * @param collection the collection's name, non-empty, in the shard's database (see
     *     {@link MongoCommand#inDatabase})
     * @param filter the query filter, not {@code null}
     * @param projection {@code null} for whole documents
     * @param sort {@code null} for the server's order
     * @param limit 0 for no limit
     * @return the command; replies at most {@code limit} documents (every match for 0), in {@code sort} order
     * @throws IllegalArgumentException if {@code collection} is {@code null} or empty, or {@code limit < 0}
     * @throws NullPointerException if {@code filter} is {@code null}
     */
    public static MongoCommand<List<RawBsonDocument>> find(String collection, Bson filter, Bson projection, Bson sort,
            int limit) {
        return find(collection, filter, projection, sort, limit, RawBsonDocument.class);
    }

    /**
     * {@link #find(String, Bson, Bson, Bson, int)} with documents decoded as {@code type}.
     *
     * @param <T> the document class
     * @param collection the collection's name, non-empty, in the shard's database (see
     *     {@link MongoCommand#inDatabase})
     * @param filter the query filter, not {@code null}
     * @param projection {@code null} for whole documents
     * @param sort {@code null} for the server's order
     * @param limit 0 for no limit
     * @param type the document class, decoded with the driver's default codec registry (e.g.
     *     {@code org.bson.Document}, {@code BsonDocument}, {@link RawBsonDocument}), not {@code null}
     * @return the command; replies at most {@code limit} decoded documents (every match for 0), in
     *     {@code sort} order
     * @throws IllegalArgumentException if {@code collection} is {@code null} or empty, or {@code limit < 0}
     * @throws NullPointerException if {@code filter} or {@code type} is {@code null}
     */
    public static <T> MongoCommand<List<T>> find(String collection, Bson filter, Bson projection, Bson sort, int limit,
            Class<T> type) {
        checkName(collection);
        Objects.requireNonNull(filter, "filter");
        Objects.requireNonNull(type, "type");
        if (limit < 0) {
            throw new IllegalArgumentException("limit: " + limit + " (expected: >= 0)");
        }
        return new MongoCommand<>(null, new ListOp<T>() {
            @Override
            public Publisher<?> reactive(com.mongodb.reactivestreams.client.MongoDatabase db) {
                var f = db.getCollection(collection, type).find(filter);
                if (projection != null) {
                    f = f.projection(projection);
                }
                if (sort != null) {
                    f = f.sort(sort);
                }
                if (limit > 0) {
                    f = f.limit(limit).batchSize(limit);
                }
                return f;
            }

            @Override
            public List<T> sync(com.mongodb.client.MongoDatabase db) {
                var f = db.getCollection(collection, type).find(filter);
                if (projection != null) {
                    f = f.projection(projection);
                }
                if (sort != null) {
                    f = f.sort(sort);
                }
                if (limit > 0) {
                    f = f.limit(limit).batchSize(limit);
                }
                return f.into(new ArrayList<>());
            }

            @Override
            public String describe() {
                return collection + ".find(" + bson(filter) + ")" + (limit > 0 ? ".limit(" + limit + ")" : "");
            }
        });
    }

    /**
     * {@code aggregate(pipeline)} on {@code collection}: the result documents.
     *
     * @param collection the collection's name, non-empty, in the shard's database (see
     *     {@link MongoCommand#inDatabase})
     * @param pipeline the stages, e.g. {@code Aggregates.match(...)}; copied, none {@code null}
     * @return the command; replies the documents the pipeline outputs, in its order
     * @throws IllegalArgumentException if {@code collection} is {@code null} or empty
     * @throws NullPointerException if {@code pipeline} or a stage is {@code null}
     */
    public static MongoCommand<List<RawBsonDocument>> aggregate(String collection, List<? extends Bson> pipeline) {
        checkName(collection);
        List<Bson> p = List.copyOf(pipeline);
        return new MongoCommand<>(null, new ListOp<RawBsonDocument>() {
            @Override
            public Publisher<?> reactive(com.mongodb.reactivestreams.client.MongoDatabase db) {
                return db.getCollection(collection, RawBsonDocument.class).aggregate(p);
            }

            @Override
            public List<RawBsonDocument> sync(com.mongodb.client.MongoDatabase db) {
                return db.getCollection(collection, RawBsonDocument.class).aggregate(p).into(new ArrayList<>());
            }

            @Override
            public String describe() {
                return collection + ".aggregate(" + p.size() + " stages)";
            }
        });
    }

    /**
     * {@code insertOne(document)} on {@code collection}: the inserted {@code _id}.
     *
     * @param collection the collection's name, non-empty, in the shard's database (see
     *     {@link MongoCommand#inDatabase})
     * @param document the document, not {@code null}; converted to BSON now (later changes to it are
     *     not sent), and each send inserts a copy
     * @return the command; replies the inserted {@code _id}: the document's, or an {@code ObjectId} the
     *     driver generated. A duplicate {@code _id} fails the call with
     *     {@link io.doubleface.driver.ShardException.Kind#SHARD_ERROR}
     * @throws IllegalArgumentException if {@code collection} is {@code null} or empty
     * @throws NullPointerException if {@code document} is {@code null}
     */
    public static MongoCommand<BsonValue> insertOne(String collection, Bson document) {
        checkName(collection);
        BsonDocument d = document.toBsonDocument(BsonDocument.class, MongoClientSettings.getDefaultCodecRegistry());
        return new MongoCommand<>(null, new SingleOp<BsonValue>() {
            @Override
            public Publisher<?> reactive(com.mongodb.reactivestreams.client.MongoDatabase db) {
                return db.getCollection(collection, BsonDocument.class).insertOne(d.clone());
            }

            @Override
            BsonValue single(Object item) {
                return ((com.mongodb.client.result.InsertOneResult) item).getInsertedId();
            }

            @Override
            public BsonValue sync(com.mongodb.client.MongoDatabase db) {
                return db.getCollection(collection, BsonDocument.class).insertOne(d.clone()).getInsertedId();
            }

            @Override
            public String describe() {
                return collection + ".insertOne(…)";
            }
        });
    }

    /**
     * {@code updateOne(filter, update)} on {@code collection}: the number of documents modified.
     *
     * @param collection the collection's name, non-empty, in the shard's database (see
     *     {@link MongoCommand#inDatabase})
     * @param filter selects the document, not {@code null}; the first match is updated
     * @param update the update operators, e.g. {@code Updates.set("text", text)}, not {@code null}
     * @return the command; replies 1 if a document was modified, 0 if none matched or it was unchanged
     * @throws IllegalArgumentException if {@code collection} is {@code null} or empty
     * @throws NullPointerException if {@code filter} or {@code update} is {@code null}
     */
    public static MongoCommand<Long> updateOne(String collection, Bson filter, Bson update) {
        return update(collection, filter, update, false);
    }

    /**
     * {@code updateMany(filter, update)} on {@code collection}: the number of documents modified.
     *
     * @param collection the collection's name, non-empty, in the shard's database (see
     *     {@link MongoCommand#inDatabase})
     * @param filter selects the documents, not {@code null}
     * @param update the update operators, e.g. {@code Updates.inc("views", 1)}, not {@code null}
     * @return the command; replies the number of documents modified (matched ones left unchanged are not
     *     counted)
     * @throws IllegalArgumentException if {@code collection} is {@code null} or empty
     * @throws NullPointerException if {@code filter} or {@code update} is {@code null}
     */
    public static MongoCommand<Long> updateMany(String collection, Bson filter, Bson update) {
        return update(collection, filter, update, true);
    }

    private static MongoCommand<Long> update(String collection, Bson filter, Bson update, boolean many) {
        checkName(collection);
        Objects.requireNonNull(filter, "filter");
        Objects.requireNonNull(update, "update");
        return new MongoCommand<>(null, new SingleOp<Long>() {
            @Override
            public Publisher<?> reactive(com.mongodb.reactivestreams.client.MongoDatabase db) {
                var c = db.getCollection(collection, BsonDocument.class);
                return many ? c.updateMany(filter, update) : c.updateOne(filter, update);
            }

            @Override
            Long single(Object item) {
                return ((com.mongodb.client.result.UpdateResult) item).getModifiedCount();
            }

            @Override
            public Long sync(com.mongodb.client.MongoDatabase db) {
                var c = db.getCollection(collection, BsonDocument.class);
                return (many ? c.updateMany(filter, update) : c.updateOne(filter, update)).getModifiedCount();
            }

            @Override
            public String describe() {
                return collection + (many ? ".updateMany(" : ".updateOne(") + bson(filter) + ", …)";
            }
        });
    }

    /**
     * {@code deleteMany(filter)} on {@code collection}: the number of documents deleted.
     *
     * @param collection the collection's name, non-empty, in the shard's database (see
     *     {@link MongoCommand#inDatabase})
     * @param filter selects the documents, not {@code null}; {@code new BsonDocument()} deletes every one
     * @return the command; replies the number of documents deleted
     * @throws IllegalArgumentException if {@code collection} is {@code null} or empty
     * @throws NullPointerException if {@code filter} is {@code null}
     */
    public static MongoCommand<Long> deleteMany(String collection, Bson filter) {
        checkName(collection);
        Objects.requireNonNull(filter, "filter");
        return new MongoCommand<>(null, new SingleOp<Long>() {
            @Override
            public Publisher<?> reactive(com.mongodb.reactivestreams.client.MongoDatabase db) {
                return db.getCollection(collection, BsonDocument.class).deleteMany(filter);
            }

            @Override
            Long single(Object item) {
                return ((com.mongodb.client.result.DeleteResult) item).getDeletedCount();
            }

            @Override
            public Long sync(com.mongodb.client.MongoDatabase db) {
                return db.getCollection(collection, BsonDocument.class).deleteMany(filter).getDeletedCount();
            }

            @Override
            public String describe() {
                return collection + ".deleteMany(" + bson(filter) + ")";
            }
        });
    }

    /**
     * Any database command ({@code runCommand}), e.g. {@code {count: "posts"}}: the server's reply document.
     *
     * @param command the command document, its first key naming the command, not {@code null}
     * @return the command; replies the server's reply document. A reply with {@code ok: 0} fails the call
     *     with {@link io.doubleface.driver.ShardException.Kind#SHARD_ERROR}
     * @throws NullPointerException if {@code command} is {@code null}
     */
    public static MongoCommand<RawBsonDocument> runCommand(Bson command) {
        Objects.requireNonNull(command, "command");
        return new MongoCommand<>(null, new SingleOp<RawBsonDocument>() {
            @Override
            public Publisher<?> reactive(com.mongodb.reactivestreams.client.MongoDatabase db) {
                return db.runCommand(command, RawBsonDocument.class);
            }

            @Override
            RawBsonDocument single(Object item) {
                return (RawBsonDocument) item;
            }

            @Override
            public RawBsonDocument sync(com.mongodb.client.MongoDatabase db) {
                return db.runCommand(command, RawBsonDocument.class);
            }

            @Override
            public String describe() {
                return "runCommand(" + bson(command) + ")";
            }
        });
    }

    /** An operation whose reply is every item, in order. */
    private abstract static class ListOp<T> implements MongoCommand.Op<List<T>> {
        @Override
        @SuppressWarnings("unchecked")
        public List<T> reply(List<Object> items) {
            return (List<T>) (List<?>) items;
        }
    }

    /** An operation with one result item. */
    private abstract static class SingleOp<V> implements MongoCommand.Op<V> {
        abstract V single(Object item);

        @Override
        public V reply(List<Object> items) {
            if (items.size() != 1) {
                throw new IllegalStateException("expected one result, got " + items.size());
            }
            return single(items.get(0));
        }
    }

    private static void checkName(String collection) {
        if (collection == null || collection.isEmpty()) {
            throw new IllegalArgumentException("collection: '" + collection + "' (expected: a name)");
        }
    }

    private static String bson(Bson b) {
        try {
            String s = b.toBsonDocument(BsonDocument.class, MongoClientSettings.getDefaultCodecRegistry()).toJson();
            return s.length() <= 120 ? s : s.substring(0, 120) + "…";
        } catch (RuntimeException e) {
            return b.toString();
        }
    }
}
