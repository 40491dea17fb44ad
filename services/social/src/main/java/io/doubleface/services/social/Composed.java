package io.doubleface.services.social;

import io.doubleface.services.social.v1.ComposeReply;

/**
 * A compose-post answer.
 *
 * @param id the new post's id
 * @param ts its time, ms since the epoch (its score on the timelines)
 * @param followers the home timelines it was added to (its author's followers)
 */
public record Composed(long id, long ts, int followers) {

    /** {@return e.g. {@code {"id":1803…,"ts":1767…,"followers":12}} and a newline} */
    public String toJson() {
        return "{\"id\":" + id + ",\"ts\":" + ts + ",\"followers\":" + followers + "}\n";
    }

    /** {@return the gRPC answer} */
    public ComposeReply toProto() {
        return ComposeReply.newBuilder().setId(id).setTs(ts).setFollowers(followers).build();
    }
}
