package io.doubleface.services.router;

import io.doubleface.services.musuite.Json;
import io.doubleface.services.router.v1.GetReply;
import io.doubleface.services.router.v1.SetReply;
import java.util.List;

/** Router's answers: {@link Got} for a get, {@link Stored} for a set. */
public sealed interface RouterResult {

    /** {@return the JSON answer} */
    String toJson();

    /**
     * A get's answer.
     *
     * @param key the key
     * @param found whether the key has a value
     * @param value its value, {@code ""} if not found
     */
    record Got(String key, boolean found, String value) implements RouterResult {

        /** {@return e.g. {@code {"key":"key:7","found":true,"value":"…"}}} */
        @Override
        public String toJson() {
            StringBuilder sb = Json.quote(new StringBuilder("{\"key\":"), key).append(",\"found\":").append(found);
            if (found) {
                Json.quote(sb.append(",\"value\":"), value);
            }
            return sb.append("}\n").toString();
        }

        /** {@return the gRPC answer} */
        public GetReply toProto() {
            return GetReply.newBuilder().setFound(found).setValue(value).build();
        }
    }

    /**
     * A set's answer.
     *
     * @param key the key
     * @param replicas the leaves that stored the value, ascending
     * @param missingReplicas the leaves of the key's group that did not, ascending
     */
    record Stored(String key, List<Integer> replicas, List<Integer> missingReplicas) implements RouterResult {

        /** Copies the lists. */
        public Stored {
            replicas = List.copyOf(replicas);
            missingReplicas = List.copyOf(missingReplicas);
        }

        /** {@return e.g. {@code {"key":"k","replicas":[3,4,5],"missing_replicas":[]}}} */
        @Override
        public String toJson() {
            StringBuilder sb = Json.quote(new StringBuilder("{\"key\":"), key).append(",\"replicas\":");
            Json.array(sb, replicas).append(",\"missing_replicas\":");
            return Json.array(sb, missingReplicas).append("}\n").toString();
        }

        /** {@return the gRPC answer} */
        public SetReply toProto() {
            return SetReply.newBuilder().addAllReplicas(replicas).addAllMissingReplicas(missingReplicas).build();
        }
    }
}
