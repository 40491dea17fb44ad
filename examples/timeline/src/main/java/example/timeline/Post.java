package example.timeline;

import org.bson.RawBsonDocument;

/** One post, as stored in MongoDB ({@code posts} collection, {@code _id} = id) and as answered. */
public record Post(long id, long author, String text, long ts) {

    static Post of(RawBsonDocument d) {
        return new Post(d.getInt64("_id").getValue(), d.getInt64("author").getValue(),
                d.getString("text").getValue(), d.getInt64("ts").getValue());
    }
}
