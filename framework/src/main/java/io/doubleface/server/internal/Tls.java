package io.doubleface.server.internal;

import io.grpc.netty.GrpcSslContexts;
import io.netty.handler.codec.http2.Http2SecurityUtil;
import io.netty.handler.ssl.ApplicationProtocolConfig;
import io.netty.handler.ssl.ApplicationProtocolNames;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import io.netty.handler.ssl.SupportedCipherSuiteFilter;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import javax.net.ssl.SSLException;

/**
 * Server TLS contexts from PEM files: OpenSSL (BoringSSL) when {@code netty-tcnative-boringssl-static}
 * is on the class path, the JDK's TLS otherwise; ALPN {@code h2} and {@code http/1.1} (or
 * {@code http/1.1} alone) for the HTTP listeners, {@code h2} for gRPC.
 */
public final class Tls {

    private Tls() {}

    /** {@return the provider used: OPENSSL when netty-tcnative is available, else JDK} */
    public static SslProvider provider() {
        return OpenSsl.isAvailable() ? SslProvider.OPENSSL : SslProvider.JDK;
    }

    /**
     * A server context for HTTP/1.1 (ALPN {@code http/1.1}).
     *
     * @param certChainPem the certificate chain, PEM
     * @param keyPem the private key, PEM (PKCS#8, unencrypted)
     * @return the context
     * @throws IllegalArgumentException if a file is missing or unreadable as PEM, with the file and reason
     */
    public static SslContext http(Path certChainPem, Path keyPem) {
        return http(certChainPem, keyPem, false);
    }

    /**
     * A server context for the HTTP listener: ALPN {@code h2} then {@code http/1.1} (the server's
     * preference) with {@code http2}, with the cipher suites HTTP/2 allows (RFC 9113 §9.2.2);
     * {@code http/1.1} alone without. A client that offers no ALPN gets HTTP/1.1.
     *
     * @param certChainPem the certificate chain, PEM
     * @param keyPem the private key, PEM (PKCS#8, unencrypted)
     * @param http2 whether to offer {@code h2}
     * @return the context
     * @throws IllegalArgumentException if a file is missing or unreadable as PEM, with the file and reason
     */
    public static SslContext http(Path certChainPem, Path keyPem, boolean http2) {
        check(certChainPem, "certificate");
        check(keyPem, "private key");
        try {
            SslContextBuilder b = SslContextBuilder.forServer(certChainPem.toFile(), keyPem.toFile())
                    .sslProvider(provider());
            if (http2) {
                b.ciphers(Http2SecurityUtil.CIPHERS, SupportedCipherSuiteFilter.INSTANCE);
            }
            return b.applicationProtocolConfig(new ApplicationProtocolConfig(ApplicationProtocolConfig.Protocol.ALPN,
                            ApplicationProtocolConfig.SelectorFailureBehavior.NO_ADVERTISE,
                            ApplicationProtocolConfig.SelectedListenerFailureBehavior.ACCEPT,
                            http2 ? new String[] {ApplicationProtocolNames.HTTP_2, ApplicationProtocolNames.HTTP_1_1}
                                    : new String[] {ApplicationProtocolNames.HTTP_1_1}))
                    .build();
        } catch (SSLException | IllegalArgumentException e) {
            throw bad(certChainPem, keyPem, e);
        }
    }

    /**
     * A server context for gRPC (HTTP/2, ALPN {@code h2}), as grpc-java configures it.
     *
     * @param certChainPem the certificate chain, PEM
     * @param keyPem the private key, PEM (PKCS#8, unencrypted)
     * @return the context
     * @throws IllegalArgumentException if a file is missing or unreadable as PEM
     */
    public static SslContext grpc(Path certChainPem, Path keyPem) {
        check(certChainPem, "certificate");
        check(keyPem, "private key");
        try {
            File cert = certChainPem.toFile();
            File key = keyPem.toFile();
            return GrpcSslContexts.configure(SslContextBuilder.forServer(cert, key), provider()).build();
        } catch (SSLException | IllegalArgumentException e) {
            throw bad(certChainPem, keyPem, e);
        }
    }

    private static void check(Path p, String what) {
        if (p == null || !Files.isReadable(p)) {
            throw new IllegalArgumentException("TLS " + what + " file " + p + ": not found or not readable");
        }
    }

    private static IllegalArgumentException bad(Path cert, Path key, Exception e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return new IllegalArgumentException("TLS certificate " + cert + " / key " + key + ": " + e.getMessage()
                + (root != e ? " (" + root + ")" : ""), e);
    }
}
