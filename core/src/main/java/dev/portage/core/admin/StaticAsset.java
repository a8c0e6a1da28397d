package dev.portage.core.admin;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Map;

/**
 * Serves one file bundled in the jar (the dashboard's page, script and style sheet), read once at
 * construction. The content security policy allows nothing but this server, so the page can load no
 * external URL even if asked to. Immutable.
 */
final class StaticAsset implements AdminHandler {

  static final String CONTENT_SECURITY_POLICY =
      "default-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'";

  private final AdminResponse response;

  /**
   * @param resource name relative to this package, e.g. {@code dashboard.html}
   * @param contentType the {@code Content-Type} to answer with
   * @throws UncheckedIOException if the resource is missing from the jar
   */
  StaticAsset(String resource, String contentType) {
    byte[] body;
    try (InputStream in = StaticAsset.class.getResourceAsStream(resource)) {
      if (in == null) {
        throw new IOException("resource " + resource + " is missing from the jar");
      }
      body = in.readAllBytes();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    response =
        new AdminResponse(
            200,
            contentType,
            body,
            Map.of(
                "Cache-Control", "no-cache",
                "X-Content-Type-Options", "nosniff",
                "Content-Security-Policy", CONTENT_SECURITY_POLICY));
  }

  @Override
  public AdminResponse handle(AdminRequest request) {
    return response;
  }
}
