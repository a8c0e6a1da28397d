package dev.portage.core.http;

import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http.DefaultHttpHeadersFactory;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpHeadersFactory;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectDecoder;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.AsciiString;
import io.netty.util.concurrent.FastThreadLocal;
import java.nio.charset.StandardCharsets;

/**
 * A strict parser of one complete, plain HTTP/1.1 request head that is already whole in a buffer,
 * for the requests almost every client sends: a known token method other than CONNECT, an
 * origin-form or absolute-form target of visible ASCII, {@code HTTP/1.0} or {@code HTTP/1.1},
 * single spaces, CRLF line ends, no folded lines, token header names directly followed by the
 * colon, values of visible ASCII, spaces and tabs, and no {@code Content-Length}, {@code
 * Transfer-Encoding} or {@code Upgrade} header (so the request has no body and stays HTTP/1.1).
 * Anything else, including a head not yet whole or near Netty's size limits, is "not handled":
 * {@link #parse} returns null and leaves the buffer as it was, so the caller hands the same bytes
 * to Netty's decoder and its verdict. On what it does handle it builds the same request Netty's
 * decoder builds (same header factory, names spelled as sent, values trimmed of spaces and tabs).
 *
 * <p>One instance per connection: it remembers the names, values and target of the previous
 * request and hands out the same immutable objects when the bytes repeat, which keep-alive clients'
 * requests nearly always do. Confined to the channel's event loop.
 */
final class PlainHead {

  /** Conservatively under Netty's defaults (4096 for the line, 8192 for the header lines). */
  static final int MAX_LINE = HttpObjectDecoder.DEFAULT_MAX_INITIAL_LINE_LENGTH - 64;

  static final int MAX_HEADERS = HttpObjectDecoder.DEFAULT_MAX_HEADER_SIZE - 64;

  /** Headers remembered from the previous request, by position. */
  private static final int REMEMBERED = 32;

  /** Per event loop thread: the copy of a head read from a direct buffer; nothing outlives a parse. */
  private static final FastThreadLocal<byte[]> SCRATCH =
      new FastThreadLocal<>() {
        @Override
        protected byte[] initialValue() {
          return new byte[MAX_LINE + MAX_HEADERS];
        }
      };

  private static final HttpHeadersFactory HEADERS = DefaultHttpHeadersFactory.headersFactory();

  private static final boolean[] TOKEN = new boolean[256];

  static {
    for (int c = '0'; c <= '9'; c++) {
      TOKEN[c] = true;
    }
    for (int c = 'a'; c <= 'z'; c++) {
      TOKEN[c] = true;
      TOKEN[c - 32] = true;
    }
    for (char c : "!#$%&'*+-.^_`|~".toCharArray()) {
      TOKEN[c] = true;
    }
  }

  private static final HttpMethod[] METHODS = {
    HttpMethod.GET, HttpMethod.HEAD, HttpMethod.POST, HttpMethod.PUT, HttpMethod.DELETE,
    HttpMethod.OPTIONS, HttpMethod.PATCH, HttpMethod.TRACE,
  };

  private static final AsciiString HTTP_1_1 = AsciiString.cached("HTTP/1.1");
  private static final AsciiString HTTP_1_0 = AsciiString.cached("HTTP/1.0");

  private final AsciiString[] names = new AsciiString[REMEMBERED];
  private final String[] values = new String[REMEMBERED];
  private String target;

  /**
   * The request whose head starts at {@code in}'s reader index, with the reader index moved past
   * its blank line; or null, the buffer untouched, when the head is not one this parser handles.
   */
  HttpRequest parse(ByteBuf in) {
    int n = Math.min(in.readableBytes(), MAX_LINE + MAX_HEADERS);
    byte[] a;
    int start;
    if (in.hasArray()) {
      a = in.array();
      start = in.arrayOffset() + in.readerIndex();
    } else {
      // Socket reads land in direct buffers: one copy of the head (a few hundred bytes) is far
      // cheaper than reading it byte by byte through the buffer's accessors.
      a = SCRATCH.get();
      in.getBytes(in.readerIndex(), a, 0, n);
      start = 0;
    }
    int end = start + n;

    // Request line: METHOD SP target SP HTTP/1.x CRLF
    int lineEnd = Math.min(end, start + MAX_LINE);
    HttpMethod method = method(a, start, lineEnd);
    if (method == null) {
      return null;
    }
    int p = start + method.name().length() + 1;
    int targetStart = p;
    while (p < lineEnd && a[p] > ' ' && a[p] < 0x7f) {
      p++;
    }
    int targetLength = p - targetStart;
    if (targetLength == 0 || p + 11 > lineEnd || a[p] != ' ') {
      return null;
    }
    byte first = a[targetStart];
    if (first != '/' && !startsWithIgnoreCase(a, targetStart, p, "http://")
        && !startsWithIgnoreCase(a, targetStart, p, "https://")) {
      return null;
    }
    p++;
    HttpVersion version;
    if (CommonHeaderNames.matches(HTTP_1_1, a, p, 8)) {
      version = HttpVersion.HTTP_1_1;
    } else if (CommonHeaderNames.matches(HTTP_1_0, a, p, 8)) {
      version = HttpVersion.HTTP_1_0;
    } else {
      return null;
    }
    p += 8;
    if (a[p] != '\r' || a[p + 1] != '\n') {
      return null;
    }
    p += 2;

    // Header lines, each name ":" OWS value OWS CRLF, then CRLF.
    int headersEnd = Math.min(end, p + MAX_HEADERS);
    HttpHeaders headers = HEADERS.newHeaders();
    int index = 0;
    while (true) {
      if (p + 1 >= headersEnd) {
        return null; // not whole yet, or too big to be sure of the verdict
      }
      if (a[p] == '\r') {
        if (a[p + 1] != '\n') {
          return null;
        }
        p += 2;
        break;
      }
      int nameStart = p;
      while (p < headersEnd && TOKEN[a[p] & 0xff]) {
        p++;
      }
      int nameLength = p - nameStart;
      if (nameLength == 0 || p >= headersEnd || a[p] != ':' || mayHaveBody(a, nameStart, nameLength)) {
        return null;
      }
      p++;
      while (p < headersEnd && (a[p] == ' ' || a[p] == '\t')) {
        p++;
      }
      int valueStart = p;
      int valueEnd = p; // after the last byte that is not a space or tab
      while (p < headersEnd) {
        byte b = a[p];
        if (b == '\r') {
          break;
        }
        if (b > ' ' && b < 0x7f) {
          valueEnd = p + 1;
        } else if (b != ' ' && b != '\t') {
          return null; // a control byte, DEL or obs-text: Netty's decoder decides
        }
        p++;
      }
      if (p + 1 >= headersEnd || a[p + 1] != '\n') {
        return null;
      }
      p += 2;
      headers.add(name(index, a, nameStart, nameLength), value(index, a, valueStart, valueEnd - valueStart));
      index++;
    }
    String uri = target;
    if (uri == null || !sameBytes(uri, a, targetStart, targetLength)) {
      uri = new String(a, targetStart, targetLength, StandardCharsets.ISO_8859_1);
      target = uri;
    }
    in.skipBytes(p - start);
    return new DefaultHttpRequest(version, method, uri, headers);
  }

  private static HttpMethod method(byte[] a, int start, int end) {
    for (HttpMethod m : METHODS) {
      AsciiString name = m.asciiName();
      int n = name.length();
      if (start + n < end && a[start + n] == ' ' && CommonHeaderNames.matches(name, a, start, n)) {
        return m;
      }
    }
    return null;
  }

  /** Content-Length, Transfer-Encoding and Upgrade, in any case: Netty's decoder frames those. */
  private static boolean mayHaveBody(byte[] a, int start, int length) {
    return switch (length) {
      case 7 -> equalsIgnoreCase(a, start, "upgrade");
      case 14 -> equalsIgnoreCase(a, start, "content-length");
      case 17 -> equalsIgnoreCase(a, start, "transfer-encoding");
      default -> false;
    };
  }

  private AsciiString name(int index, byte[] a, int start, int length) {
    if (index < REMEMBERED) {
      AsciiString last = names[index];
      if (last != null && CommonHeaderNames.matches(last, a, start, length)) {
        return last;
      }
    }
    AsciiString name = CommonHeaderNames.find(a, start, length);
    if (name == null) {
      name = new AsciiString(a, start, length, true);
    }
    if (index < REMEMBERED) {
      names[index] = name;
    }
    return name;
  }

  private String value(int index, byte[] a, int start, int length) {
    if (index < REMEMBERED) {
      String last = values[index];
      if (last != null && sameBytes(last, a, start, length)) {
        return last;
      }
    }
    String value = new String(a, start, length, StandardCharsets.ISO_8859_1);
    if (index < REMEMBERED) {
      values[index] = value;
    }
    return value;
  }

  private static boolean sameBytes(String s, byte[] a, int start, int length) {
    if (s.length() != length) {
      return false;
    }
    for (int i = 0; i < length; i++) {
      if (s.charAt(i) != (a[start + i] & 0xff)) {
        return false;
      }
    }
    return true;
  }

  /** Whether {@code a[start...]} spells {@code lower} (lower case ASCII letters and symbols). */
  private static boolean equalsIgnoreCase(byte[] a, int start, String lower) {
    for (int i = 0; i < lower.length(); i++) {
      int b = a[start + i];
      if (b >= 'A' && b <= 'Z') {
        b += 32;
      }
      if (b != lower.charAt(i)) {
        return false;
      }
    }
    return true;
  }

  private static boolean startsWithIgnoreCase(byte[] a, int start, int end, String lower) {
    return end - start > lower.length() && equalsIgnoreCase(a, start, lower);
  }
}
