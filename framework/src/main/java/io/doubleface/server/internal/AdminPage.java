package io.doubleface.server.internal;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The live admin page ({@code GET /admin}): one self-contained HTML resource ({@value #RESOURCE})
 * whose inline script polls {@code /admin/stats} and draws the latency chart on a canvas, and the
 * {@code Content-Security-Policy} it is served with.
 *
 * <p>The policy allows exactly the page's one inline {@code <style>} and one inline
 * {@code <script>}, by their SHA-256 hashes computed here from the resource, and connections to
 * this origin only: no other script can run in the page, even one injected through data the page
 * shows (which it only ever writes as text). It also forbids framing and form submission.
 *
 * <p>The page holds no server state (the same bytes for everyone), so it is the admin listener's
 * one resource served without the token: it is the login form. The data it shows is fetched from
 * {@code /admin/stats} under the same rules as any other client.
 *
 * <p>Immutable; loaded once, when the class is.
 */
final class AdminPage {

    /** The page, on the classpath next to this class. */
    static final String RESOURCE = "admin.html";

    private static final Pattern STYLE = Pattern.compile("<style>(.*?)</style>", Pattern.DOTALL);
    private static final Pattern SCRIPT = Pattern.compile("<script>(.*?)</script>", Pattern.DOTALL);

    /** The page's bytes. */
    static final byte[] HTML;
    /** The {@code Content-Security-Policy} header of the page. */
    static final String CSP;

    static {
        try (InputStream in = AdminPage.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException("the admin page " + RESOURCE + " is missing from the framework jar");
            }
            HTML = in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the admin page " + RESOURCE, e);
        }
        String page = new String(HTML, StandardCharsets.UTF_8);
        CSP = "default-src 'none'; script-src " + hashOfOnly(SCRIPT, page) + "; style-src " + hashOfOnly(STYLE, page)
                + "; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
    }

    private AdminPage() {}

    /** The CSP source ({@code 'sha256-…'}) of the one element {@code p} matches in {@code page}. */
    static String hashOfOnly(Pattern p, String page) {
        Matcher m = p.matcher(page);
        if (!m.find()) {
            throw new IllegalStateException("the admin page has no " + p.pattern());
        }
        String body = m.group(1);
        if (m.find()) {
            throw new IllegalStateException("the admin page has more than one " + p.pattern() + " (the policy allows one)");
        }
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(body.getBytes(StandardCharsets.UTF_8));
            return "'sha256-" + Base64.getEncoder().encodeToString(digest) + "'";
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("no SHA-256 in this JVM", e);
        }
    }
}
