package dev.portage.hub.cache;

import java.nio.charset.StandardCharsets;

/**
 * Turns any string into one safe file-name segment: letters, digits, {@code - _ .} pass through, a
 * leading "." and every other byte become {@code %XX}. So {@code ..}, {@code a/b} and {@code ""} can
 * never name a parent, a subdirectory or the directory itself (upstream bug #2597), and names that
 * start with "." are left for the cache's own files (temp files, list metadata).
 */
final class PathSegments {

  private static final char[] HEX = "0123456789ABCDEF".toCharArray();

  private PathSegments() {}

  static String encode(String value) {
    if (value.isEmpty()) {
      return "%";
    }
    byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
    StringBuilder b = new StringBuilder(bytes.length + 8);
    for (int i = 0; i < bytes.length; i++) {
      int c = bytes[i] & 0xff;
      boolean plain =
          (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-'
              || c == '_' || (c == '.' && i > 0);
      if (plain) {
        b.append((char) c);
      } else {
        b.append('%').append(HEX[c >> 4]).append(HEX[c & 0xf]);
      }
    }
    return b.toString();
  }

  /** The inverse of {@link #encode}; for cache files listed from disk. */
  static String decode(String segment) {
    if (segment.equals("%")) {
      return "";
    }
    byte[] out = new byte[segment.length()];
    int n = 0;
    for (int i = 0; i < segment.length(); i++) {
      char c = segment.charAt(i);
      if (c == '%' && i + 2 < segment.length()) {
        out[n++] = (byte) Integer.parseInt(segment, i + 1, i + 3, 16);
        i += 2;
      } else {
        out[n++] = (byte) c;
      }
    }
    return new String(out, 0, n, StandardCharsets.UTF_8);
  }
}
