package io.doubleface.services.recommend;

import io.doubleface.services.musuite.Json;
import io.doubleface.services.recommend.v1.PredictReply;
import java.util.List;

/**
 * A Recommend answer: the mean of the leaves' predictions of {@code user}'s rating of {@code item}.
 *
 * @param user the user
 * @param item the item
 * @param predicted whether any leaf predicted
 * @param rating the mean of the leaves' predictions (0 if none)
 * @param leavesPredicting the leaves that predicted
 * @param missingLeaves the leaves that did not answer, ascending
 */
public record RecommendResult(int user, int item, boolean predicted, double rating, int leavesPredicting,
        List<Integer> missingLeaves) {

    /** Copies the list. */
    public RecommendResult {
        missingLeaves = List.copyOf(missingLeaves);
    }

    /**
     * The mean of {@code predictions} (in leaf order, so every computation of it gives the same double).
     *
     * @param user the user
     * @param item the item
     * @param predictions the leaves' predictions, in leaf order
     * @param missing the leaves that did not answer
     * @return the answer
     */
    public static RecommendResult of(int user, int item, List<Predictor.Prediction> predictions, List<Integer> missing) {
        double sum = 0;
        int n = 0;
        for (Predictor.Prediction p : predictions) {
            if (p.predicted()) {
                sum += p.rating();
                n++;
            }
        }
        return new RecommendResult(user, item, n > 0, n > 0 ? sum / n : 0, n, missing);
    }

    /** {@return e.g. {@code {"user":3,"item":7,"rating":3.75,"leaves_predicting":2,"missing_leaves":[]}}; {@code null} rating if none} */
    public String toJson() {
        StringBuilder sb = new StringBuilder(96).append("{\"user\":").append(user).append(",\"item\":").append(item)
                .append(",\"rating\":").append(predicted ? Double.toString(rating) : "null")
                .append(",\"leaves_predicting\":").append(leavesPredicting).append(",\"missing_leaves\":");
        return Json.array(sb, missingLeaves).append("}\n").toString();
    }

    /** {@return the gRPC answer} */
    public PredictReply toProto() {
        return PredictReply.newBuilder().setUser(user).setItem(item).setPredicted(predicted).setRating(rating)
                .setLeavesPredicting(leavesPredicting).addAllMissingLeaves(missingLeaves).build();
    }
}
