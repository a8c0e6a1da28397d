package dev.portage.tunnel.server;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.charset.StandardCharsets;

/**
 * The exact bytes the HTTP {@code CONNECT} frontend answers with, written raw because the HTTP codec
 * is gone by the time a dial completes. Stateless.
 */
final class HttpStatusResponse {
  static final String ESTABLISHED = "HTTP/1.1 200 Connection Established\r\n\r\n";

  private HttpStatusResponse() {}

  /** {@code 200 Connection Established}, after which the socket carries raw bytes. */
  static ByteBuf established(ByteBufAllocator alloc) {
    return ascii(alloc, ESTABLISHED);
  }

  /** A plain-text error response; the caller closes the socket after writing it. */
  static ByteBuf error(ByteBufAllocator alloc, int status, String body) {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    String head = "HTTP/1.1 " + status + " " + reason(status) + "\r\n"
        + "Content-Type: text/plain\r\n"
        + "Content-Length: " + bytes.length + "\r\n"
        + "Connection: close\r\n\r\n";
    ByteBuf buf = alloc.buffer(head.length() + bytes.length);
    buf.writeCharSequence(head, StandardCharsets.US_ASCII);
    buf.writeBytes(bytes);
    return buf;
  }

  /** Status for an agent's dial error text: 504 timeouts, 503 fd exhaustion, 502 otherwise. */
  static int statusForDialError(String error) {
    String e = error.toLowerCase(java.util.Locale.ROOT);
    if (e.contains("timeout") || e.contains("deadline exceeded")) {
      return 504;
    }
    if (e.contains("too many open files")) {
      return 503;
    }
    return 502;
  }

  static String reason(int status) {
    return switch (status) {
      case 400 -> "Bad Request";
      case 405 -> "Method Not Allowed";
      case 500 -> "Internal Server Error";
      case 502 -> "Bad Gateway";
      case 503 -> "Service Unavailable";
      case 504 -> "Gateway Timeout";
      case 505 -> "HTTP Version Not Supported";
      default -> "Error";
    };
  }

  private static ByteBuf ascii(ByteBufAllocator alloc, String s) {
    ByteBuf buf = alloc.buffer(s.length());
    buf.writeCharSequence(s, StandardCharsets.US_ASCII);
    return buf;
  }
}
