package io.doubleface.services.social;

import io.doubleface.services.musuite.Json;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * One post: as stored in MongoDB (collection {@value SocialLayout#POSTS}, {@code {_id: int64, author:
 * int32, ts: int64, text: string}}) and as answered.
 *
 * @param id the post's id ({@link PostIds})
 * @param author the user who wrote it
 * @param ts when, in ms since the epoch (its score on the home timelines)
 * @param text what
 */
public record Post(long id, int author, long ts, String text) {

    /** {@return the MongoDB document} */
    public BsonDocument toBson() {
        return new BsonDocument("_id", new BsonInt64(id)).append("author", new BsonInt32(author))
                .append("ts", new BsonInt64(ts)).append("text", new BsonString(text));
    }

    /**
     * Reads a stored post.
     *
     * @param d the document
     * @return the post
     * @throws IllegalStateException if a field is missing or of another type
     */
    public static Post of(BsonDocument d) {
        BsonValue id = d.get("_id");
        BsonValue author = d.get("author");
        BsonValue ts = d.get("ts");
        BsonValue text = d.get("text");
        if (id == null || !id.isInt64() || author == null || !author.isInt32() || ts == null || !ts.isInt64()
                || text == null || !text.isString()) {
            throw new IllegalStateException("malformed post document: " + d.toJson());
        }
        return new Post(id.asInt64().getValue(), author.asInt32().getValue(), ts.asInt64().getValue(),
                text.asString().getValue());
    }

    /**
     * Appends the post as JSON: {@code {"id":…,"author":…,"ts":…,"text":"…"}}.
     *
     * @param sb where
     * @return {@code sb}
     */
    public StringBuilder appendJson(StringBuilder sb) {
        sb.append("{\"id\":").append(id).append(",\"author\":").append(author).append(",\"ts\":").append(ts)
                .append(",\"text\":");
        return Json.quote(sb, text).append('}');
    }

    /** {@return the gRPC message} */
    public io.doubleface.services.social.v1.Post toProto() {
        return io.doubleface.services.social.v1.Post.newBuilder().setId(id).setAuthor(author).setTs(ts).setText(text)
                .build();
    }
}
