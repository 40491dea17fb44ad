package io.doubleface.services.ycsb;

import io.doubleface.kv.Records;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The YCSB service's expected response, written from the data — the records' field values
 * ({@link Records#value}) and the response format as docs/services.md documents it — and never
 * with the service's own planning, reply handling or encoder, so a test comparing a server's answer
 * with it can catch a bug those share. {@link YcsbReference} (main code, used by {@code demo} to
 * check answers) must agree with it: {@code YcsbAnswerTest}.
 */
final class YcsbAnswer {

    /** Answers cached by records, scan length and the query's path. */
    private static final Map<String, String> ANSWERS = new ConcurrentHashMap<>();

    private YcsbAnswer() {
    }

    /**
     * The response body for {@code q}: {@code {"key":N,"fanout":K,"size":"S","replies":[…]}} and a
     * newline, reply {@code i} being the records the call to key {@code (N + i) mod records} reads,
     * each {@code {"key":k,"fF":"value",…}}: {@code small} the one field {@code k mod 10},
     * {@code medium} all ten, {@code large} all ten of {@code scanRecords} records from {@code k} on
     * (keys wrapping at {@code records}).
     */
    static String body(long records, int scanRecords, YcsbQuery q) {
        return ANSWERS.computeIfAbsent(records + "/" + scanRecords + TestCluster.path(q), k -> {
            String size = switch (q.size()) {
                case SMALL -> "small";
                case MEDIUM -> "medium";
                case LARGE -> "large";
            };
            StringBuilder b = new StringBuilder("{\"key\":").append(q.key()).append(",\"fanout\":").append(q.fanout())
                    .append(",\"size\":\"").append(size).append("\",\"replies\":[");
            for (int i = 0; i < q.fanout(); i++) {
                long key = (q.key() + i) % records;
                b.append(i > 0 ? ",[" : "[");
                int rows = q.size() == Size.LARGE ? scanRecords : 1;
                for (int r = 0; r < rows; r++) {
                    long row = (key + r) % records;
                    b.append(r > 0 ? ",{" : "{").append("\"key\":").append(row);
                    for (int f = 0; f < Records.FIELD_COUNT; f++) {
                        if (q.size() == Size.SMALL && f != key % Records.FIELD_COUNT) {
                            continue;
                        }
                        b.append(",\"f").append(f).append("\":\"")
                                .append(new String(Records.value(row, f), StandardCharsets.US_ASCII)).append('"');
                    }
                    b.append('}');
                }
                b.append(']');
            }
            return b.append("]}\n").toString();
        });
    }
}
