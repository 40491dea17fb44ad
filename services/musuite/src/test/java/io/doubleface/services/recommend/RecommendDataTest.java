package io.doubleface.services.recommend;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The ratings, the predictor and the mean, without a network. */
class RecommendDataTest {

    static final RecommendData DATA = RecommendData.of(7, 100, 150, 3_000);

    @Test
    void theSameSeedGivesTheSameTuplesAndAnotherSeedOthers() {
        RecommendData again = RecommendData.of(7, 100, 150, 3_000);
        RecommendData other = RecommendData.of(8, 100, 150, 3_000);
        int differ = 0;
        int[] stars = new int[6];
        for (int t = 0; t < DATA.ratings(); t++) {
            int[] x = DATA.tuple(t);
            assertArrayEquals(x, again.tuple(t));
            differ += java.util.Arrays.equals(x, other.tuple(t)) ? 0 : 1;
            assertTrue(x[2] >= 1 && x[2] <= 5);
            assertEquals(x[2], DATA.rating(x[0], x[1]), "a pair has one rating");
            stars[x[2]]++;
        }
        assertTrue(differ > 2_900, "other seed, same tuples: " + (3_000 - differ));
        for (int s = 1; s <= 5; s++) {
            assertTrue(stars[s] > 0, "no " + s + "-star rating");
        }
        assertArrayEquals(DATA.query(9), again.query(9));
        assertThrows(IllegalArgumentException.class, () -> RecommendData.of(1, 0, 1, 1));
        assertThrows(IndexOutOfBoundsException.class, () -> DATA.tuple(3_000));
    }

    @Test
    void predictionsBeatAConstantGuessAndUseOnlySimilarUsers() {
        RecommendReference ref = new RecommendReference(DATA, 4);
        double[] acc = ref.accuracy(500);
        double constant = 0;
        for (int j = 0; j < 500; j++) {
            int[] q = DATA.query(j);
            constant += Math.abs(3.5 - DATA.rating(q[0], q[1]));
        }
        constant /= 500;
        System.out.printf("Recommend test corpus: MAE %.3f (constant 3.5: %.3f), coverage %.3f%n", acc[0], constant,
                acc[1]);
        assertTrue(acc[0] < constant, "MAE " + acc[0] + " vs constant guess " + constant);
        assertTrue(acc[1] > 0.5, "coverage " + acc[1]);
        // a user alone on a shard has no neighbours
        Predictor one = new Predictor(RecommendData.of(1, 1, 5, 50), 0, 1);
        assertFalse(one.predict(0, 2).predicted());
    }

    @Test
    void pearsonAndTheMeanOfLeaves() {
        int[][] a = {{1, 2, 3}, {5, 3, 1}};
        int[][] b = {{1, 2, 3, 4}, {4, 3, 2, 5}};
        assertEquals(1.0, Predictor.pearson(a, 3, new int[][] {{1, 2, 3}, {4, 3, 2}}, 3), 1e-12);
        assertEquals(0.0, Predictor.pearson(a, 3, new int[][] {{1}, {4}}, 4), "one co-rated item is too few");
        assertEquals(4 / Math.sqrt(22), Predictor.pearson(a, 3, b, 3.5), 1e-12); // centred: (2,0,-2) and (.5,-.5,-1.5)
        RecommendResult r = RecommendResult.of(1, 2, List.of(new Predictor.Prediction(true, 4, 3),
                new Predictor.Prediction(false, 0, 0), new Predictor.Prediction(true, 3, 1)), List.of(5));
        assertEquals(3.5, r.rating());
        assertEquals(2, r.leavesPredicting());
        assertEquals("{\"user\":1,\"item\":2,\"rating\":3.5,\"leaves_predicting\":2,\"missing_leaves\":[5]}\n", r.toJson());
        assertEquals("{\"user\":1,\"item\":2,\"rating\":null,\"leaves_predicting\":0,\"missing_leaves\":[]}\n",
                RecommendResult.of(1, 2, List.of(), List.of()).toJson());
    }
}
