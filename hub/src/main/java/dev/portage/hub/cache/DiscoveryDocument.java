package dev.portage.hub.cache;

import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.zip.CRC32C;

/**
 * A cached API discovery answer ({@code /api}, {@code /apis}, {@code /api/v1}, {@code /apis/g/v},
 * {@code /openapi/v2}, {@code /openapi/v3[/...]}, {@code /version}): the body and the content type
 * the API server gave it. Discovery is the same for every component, so it is cached once, not per
 * component. Aggregated discovery ({@code application/json;g=apidiscovery.k8s.io;v=v2;...}) is
 * negotiated through {@code Accept}, so such an answer is kept for the {@code Accept} that asked for
 * it; a plain JSON answer suits every client and is kept for any {@code Accept}. Immutable.
 *
 * @param contentType the API server's {@code Content-Type}, "" when it sent none
 * @param body the answer's bytes
 */
public record DiscoveryDocument(String contentType, byte[] body) {

  public DiscoveryDocument {
    Objects.requireNonNull(contentType, "contentType");
    Objects.requireNonNull(body, "body");
    if (contentType.indexOf('\n') >= 0 || contentType.indexOf('\r') >= 0) {
      throw new IllegalArgumentException(
          "contentType: \"" + contentType + "\" (expected: one line)");
    }
  }

  /** Whether a GET of {@code path} (normalised, no query) asks for a discovery document. */
  public static boolean isDiscoveryPath(String path) {
    String[] p = path.split("/", -1); // "" first, as the path starts with "/"
    int n = p.length - 1;
    if (n < 1 || !p[0].isEmpty()) {
      return false;
    }
    return switch (p[1]) {
      case "api" -> n <= 2;                       // /api, /api/v1
      case "apis" -> n <= 3;                      // /apis, /apis/g, /apis/g/v
      case "openapi" -> n >= 2 && (p[2].equals("v2") && n == 2 || p[2].equals("v3"));
      case "version" -> n == 1;
      default -> false;
    };
  }

  /** Whether this answer only suits the {@code Accept} it was negotiated for. */
  public boolean negotiated() {
    return contentType.contains("apidiscovery.k8s.io");
  }

  /**
   * The cache name of {@code path} for a client sending {@code accept}; with {@code accept} ""
   * (a plain JSON answer), the name every client falls back to.
   */
  public static String name(String path, String accept) {
    if (accept.isEmpty()) {
      return path;
    }
    CRC32C crc = new CRC32C();
    crc.update(accept.getBytes(StandardCharsets.UTF_8));
    return path + " " + Long.toHexString(crc.getValue());
  }

  /** The bytes stored in the cache file: the content type, a newline, the body. */
  byte[] encode() {
    byte[] type = contentType.getBytes(StandardCharsets.UTF_8);
    byte[] out = new byte[type.length + 1 + body.length];
    System.arraycopy(type, 0, out, 0, type.length);
    out[type.length] = '\n';
    System.arraycopy(body, 0, out, type.length + 1, body.length);
    return out;
  }

  /** Reads {@link #encode()}'s form; null when there is no newline. */
  static DiscoveryDocument decode(byte[] stored) {
    for (int i = 0; i < stored.length; i++) {
      if (stored[i] == '\n') {
        byte[] body = new byte[stored.length - i - 1];
        System.arraycopy(stored, i + 1, body, 0, body.length);
        return new DiscoveryDocument(new String(stored, 0, i, StandardCharsets.UTF_8), body);
      }
    }
    return null;
  }
}
