package dev.portage.core.admin;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Objects;

/**
 * An HTTP response from an {@link AdminHandler}. The server adds {@code Content-Length}; {@code
 * headers} carries anything else (e.g. {@code Cache-Control}). Treat {@code body} as immutable.
 *
 * @param status HTTP status code, 100..599
 * @param contentType value of the {@code Content-Type} header
 * @param body response bytes; sent without a body for {@code HEAD}
 * @param headers extra response headers
 */
public record AdminResponse(
    int status, String contentType, byte[] body, Map<String, String> headers) {

  public AdminResponse {
    if (status < 100 || status > 599) {
      throw new IllegalArgumentException("status: " + status + " (expected: 100..599)");
    }
    Objects.requireNonNull(contentType, "contentType");
    Objects.requireNonNull(body, "body");
    headers = Map.copyOf(Objects.requireNonNull(headers, "headers"));
  }

  /** A {@code text/plain; charset=utf-8} response. */
  public static AdminResponse text(int status, String body) {
    return of(status, "text/plain; charset=utf-8", body);
  }

  /** An {@code application/json} response; {@code json} must already be valid JSON. */
  public static AdminResponse json(int status, String json) {
    return of(status, "application/json; charset=utf-8", json);
  }

  /** A {@code text/html; charset=utf-8} response. */
  public static AdminResponse html(int status, String html) {
    return of(status, "text/html; charset=utf-8", html);
  }

  private static AdminResponse of(int status, String contentType, String body) {
    return new AdminResponse(
        status,
        contentType,
        Objects.requireNonNull(body, "body").getBytes(StandardCharsets.UTF_8),
        Map.of());
  }
}
