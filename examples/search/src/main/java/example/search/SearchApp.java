package example.search;

import io.doubleface.api.Backend;
import io.doubleface.grpc.GrpcCall;
import io.doubleface.grpc.GrpcDriver;
import io.doubleface.server.FanoutServer;
import io.grpc.Server;
import java.util.ArrayList;
import java.util.List;

/**
 * A document search with a gRPC upstream over the user's own gRPC leaves, written only against
 * doubleface's public API. Two roles, one class:
 *
 * <pre>
 *   java -cp … example.search.SearchApp leaves 9001 4 10000        # 4 leaves on ports 9001-9004, 10000 documents
 *   java -cp … example.search.SearchApp mid grpc://127.0.0.1:9001-9004 9000
 *   grpcurl -plaintext -d '{"text": "w1 w7 w30", "limit": 5}' 127.0.0.1:9000 example.search.v1.Search/Query
 * </pre>
 */
public final class SearchApp {

    private SearchApp() {}

    /** Adds the search's backend and gRPC method to {@code builder}. */
    public static void install(FanoutServer.Builder builder, String leavesUri) {
        Backend<GrpcCall<?, ?>> leaves = builder.backend("leaves", GrpcDriver.of(leavesUri));
        builder.grpcMethod(new SearchService(leaves), new SearchService.Binding());
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 4 && args[0].equals("leaves")) {
            int first = Integer.parseInt(args[1]);
            int shards = Integer.parseInt(args[2]);
            int documents = Integer.parseInt(args[3]);
            List<Server> servers = new ArrayList<>();
            for (int s = 0; s < shards; s++) {
                servers.add(new SearchLeaf(s, shards, documents).serve(first + s));
            }
            System.out.println(shards + " leaves on 127.0.0.1:" + first + "-" + (first + shards - 1));
            servers.get(0).awaitTermination();
        } else if (args.length == 3 && args[0].equals("mid")) {
            FanoutServer.Builder b = FanoutServer.builder().grpc(Integer.parseInt(args[2])).adminPort(9090);
            install(b, args[1]);
            try (FanoutServer server = b.start()) {
                System.out.println("search on grpc://127.0.0.1:" + server.grpcPort());
                Thread.currentThread().join();
            }
        } else {
            System.err.println("usage: SearchApp leaves FIRST_PORT SHARDS DOCUMENTS | SearchApp mid LEAVES_URI GRPC_PORT");
            System.exit(2);
        }
    }
}
