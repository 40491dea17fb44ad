package io.doubleface.cli;

import io.doubleface.services.ycsb.v1.FanoutServiceGrpc;
import io.doubleface.services.ycsb.v1.QueryReply;
import io.doubleface.services.ycsb.v1.QueryRequest;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import io.netty.channel.ChannelOption;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code doubleface call <http|grpc>://HOST:PORT}: one YCSB query to a running mid-tier, over HTTP
 * ({@code GET /query}) or gRPC ({@code doubleface.ycsb.v1.FanoutService/Query}); the response body
 * goes to stdout — byte-identical for both schemes for the same query — and the status and timing
 * to stderr. A grpcurl-like check for users.
 */
@Command(name = "call",
        mixinStandardHelpOptions = true,
        versionProvider = VersionProvider.class,
        sortOptions = false,
        header = "Sends one YCSB query over HTTP or gRPC and prints the response body.",
        description = {
            "Sends one query to a YCSB mid-tier (doubleface serve ycsb) and writes the response body to stdout: over "
                + "http:// as GET /query?fanout=K&size=S&key=N, over grpc:// as doubleface.ycsb.v1.FanoutService/Query "
                + "(serve ycsb --grpc-port). Both give the same bytes for the same query. The status and the time "
                + "taken go to stderr. Options left out take the server's defaults (fanout 5, small, a random key).",
            "",
            "Exit status 1 with a message on stderr when the server answers with an error status, or cannot be "
                + "reached within --connect-timeout, or does not answer within --timeout.",
            ""},
        footer = {"", "Examples:",
            "  doubleface call http://127.0.0.1:8080 --fanout 5 --size small --key 42",
            "  doubleface call grpc://127.0.0.1:8081 --fanout 5 --size small --key 42",
            "  diff <(doubleface call http://127.0.0.1:8080 --key 42) <(doubleface call grpc://127.0.0.1:8081 --key 42)"})
final class CallCommand implements Callable<Integer> {

    /** Default connect timeout: {@value} ms. */
    static final long DEFAULT_CONNECT_TIMEOUT_MILLIS = 2_000;
    /** Default overall timeout: {@value} ms. */
    static final long DEFAULT_TIMEOUT_MILLIS = 10_000;

    private final CliEnv env;

    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "TARGET",
            description = "http://HOST:PORT (the HTTP upstream) or grpc://HOST:PORT (the gRPC upstream).")
    String target;

    @Option(names = "--fanout", paramLabel = "K", description = "Shards to read (1..shards). Default: the server's (5).")
    Integer fanout;

    @Option(names = "--size", paramLabel = "small|medium|large",
            description = "Reply size class per shard. Default: the server's (small).")
    String size;

    @Option(names = "--key", paramLabel = "N", description = "First record key (0..records-1). Default: a random key.")
    Long key;

    @Option(names = "--connect-timeout", paramLabel = "DURATION", converter = Converters.DurationConverter.class,
            defaultValue = "2s", showDefaultValue = picocli.CommandLine.Help.Visibility.ALWAYS,
            description = "Longest the connection may take (250ms, 1s, 2m).")
    Duration connectTimeout;

    @Option(names = "--timeout", paramLabel = "DURATION", converter = Converters.DurationConverter.class,
            defaultValue = "10s", showDefaultValue = picocli.CommandLine.Help.Visibility.ALWAYS,
            description = "Longest the whole call may take, connection included.")
    Duration timeout;

    CallCommand(CliEnv env) {
        this.env = env;
    }

    @Override
    public Integer call() {
        URI uri = parseTarget();
        long start = System.nanoTime();
        byte[] body = "grpc".equals(uri.getScheme()) ? callGrpc(uri, start) : callHttp(uri, start);
        env.out().print(new String(body, StandardCharsets.UTF_8));
        env.out().flush();
        return DoubleFaceCli.EXIT_OK;
    }

    private URI parseTarget() {
        URI uri;
        try {
            uri = new URI(target);
        } catch (URISyntaxException e) {
            throw badTarget(e.getMessage());
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        if (!scheme.equals("http") && !scheme.equals("grpc")) {
            throw badTarget("scheme '" + uri.getScheme() + "'");
        }
        if (uri.getHost() == null || uri.getPort() < 1) {
            throw badTarget("no host:port");
        }
        if (uri.getRawPath() != null && !uri.getRawPath().isEmpty() && !uri.getRawPath().equals("/")
                || uri.getRawQuery() != null) {
            throw badTarget("a path or query (the query is built from --fanout, --size and --key)");
        }
        return uri;
    }

    private ParameterException badTarget(String detail) {
        return new ParameterException(spec.commandLine(), "TARGET: '" + target
                + "' (expected: http://HOST:PORT or grpc://HOST:PORT): " + detail);
    }

    private String describe(URI uri) {
        return uri.getScheme() + "://" + uri.getRawAuthority();
    }

    private byte[] callHttp(URI uri, long start) {
        StringBuilder q = new StringBuilder("/query");
        char sep = '?';
        if (fanout != null) {
            q.append(sep).append("fanout=").append(fanout);
            sep = '&';
        }
        if (size != null) {
            q.append(sep).append("size=").append(java.net.URLEncoder.encode(size, StandardCharsets.UTF_8));
            sep = '&';
        }
        if (key != null) {
            q.append(sep).append("key=").append(key);
        }
        URI url = URI.create("http://" + uri.getRawAuthority() + q);
        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(connectTimeout)
                .build();
        try {
            HttpResponse<byte[]> r = client.send(HttpRequest.newBuilder(url).timeout(timeout).build(),
                    HttpResponse.BodyHandlers.ofByteArray());
            String timing = r.body().length + " bytes in " + millis(start);
            if (r.statusCode() != 200) {
                throw new CliException("HTTP " + r.statusCode() + " from " + url + " after " + millis(start) + ": "
                        + new String(r.body(), StandardCharsets.UTF_8).strip());
            }
            env.err().println("HTTP 200 from " + url + ": " + timing);
            return r.body();
        } catch (HttpConnectTimeoutException e) {
            throw new CliException("cannot reach " + describe(uri) + ": no connection within "
                    + Durations.format(connectTimeout));
        } catch (HttpTimeoutException e) {
            throw new CliException("no answer from " + describe(uri) + " within " + Durations.format(timeout));
        } catch (ConnectException e) {
            throw new CliException("cannot reach " + describe(uri) + ": connection refused");
        } catch (IOException e) {
            throw new CliException("cannot reach " + describe(uri) + ": " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CliException("interrupted");
        } finally {
            client.shutdownNow();
        }
    }

    private byte[] callGrpc(URI uri, long start) {
        QueryRequest.Builder r = QueryRequest.newBuilder();
        if (fanout != null) {
            r.setFanout(fanout);
        }
        if (size != null) {
            r.setSize(size);
        }
        if (key != null) {
            r.setKey(key);
        }
        ManagedChannel channel = NettyChannelBuilder.forAddress(uri.getHost(), uri.getPort())
                .usePlaintext()
                .withOption(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(Integer.MAX_VALUE, connectTimeout.toMillis()))
                .build();
        try {
            QueryReply reply = FanoutServiceGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(timeout.toMillis(), TimeUnit.MILLISECONDS)
                    .query(r.build());
            byte[] body = reply.getBody().toByteArray();
            env.err().println("grpc OK from " + describe(uri) + " " + FanoutServiceGrpc.getQueryMethod().getFullMethodName()
                    + ": " + body.length + " bytes in " + millis(start));
            return body;
        } catch (StatusRuntimeException e) {
            Status s = e.getStatus();
            String detail = s.getDescription() == null ? "" : ": " + s.getDescription();
            if (s.getCause() != null && s.getCause().getMessage() != null) {
                detail += " (" + s.getCause().getMessage() + ")";
            }
            if (s.getCode() == Status.Code.UNAVAILABLE && s.getCause() != null) {
                throw new CliException("cannot reach " + describe(uri) + ": grpc UNAVAILABLE" + detail);
            }
            throw new CliException("grpc " + s.getCode() + " from " + describe(uri) + " after " + millis(start) + detail);
        } finally {
            channel.shutdownNow();
            try {
                channel.awaitTermination(1, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static String millis(long start) {
        return String.format(Locale.ROOT, "%.1f ms", (System.nanoTime() - start) / 1e6);
    }
}
