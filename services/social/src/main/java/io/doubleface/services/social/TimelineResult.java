package io.doubleface.services.social;

import io.doubleface.services.social.v1.TimelineReply;
import java.util.List;

/**
 * A read-home-timeline answer.
 *
 * @param user whose home timeline
 * @param posts its newest posts, newest first
 */
public record TimelineResult(int user, List<Post> posts) {

    /** Copies the list. */
    public TimelineResult {
        posts = List.copyOf(posts);
    }

    /** {@return e.g. {@code {"user":3,"posts":[{"id":…,"author":…,"ts":…,"text":"…"},…]}} and a newline} */
    public String toJson() {
        StringBuilder sb = new StringBuilder(64 + posts.size() * 160).append("{\"user\":").append(user)
                .append(",\"posts\":[");
        for (int i = 0; i < posts.size(); i++) {
            posts.get(i).appendJson(i == 0 ? sb : sb.append(','));
        }
        return sb.append("]}\n").toString();
    }

    /** {@return the gRPC answer} */
    public TimelineReply toProto() {
        TimelineReply.Builder b = TimelineReply.newBuilder().setUser(user);
        for (Post p : posts) {
            b.addPosts(p.toProto());
        }
        return b.build();
    }
}
