package dev.portage.core.http;

import dev.portage.core.net.ScratchBytes;
import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectDecoder;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.AsciiString;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * A strict parser of one plain HTTP/1.1 head that is already whole in a buffer, for the requests
 * almost every client sends and the responses almost every server sends: for a request, a known
 * token method other than CONNECT and an origin-form or absolute-form target of visible ASCII; for
 * a response, a 2xx to 5xx status with a reason; then {@code HTTP/1.0} or {@code HTTP/1.1}, single
 * spaces, CRLF line ends, no folded lines, token header names directly followed by the colon, and
 * values of visible ASCII, spaces and tabs. A request must carry no {@code Content-Length}, {@code
 * Transfer-Encoding} or {@code Upgrade} (it has no body and stays HTTP/1.1); a response no {@code
 * Transfer-Encoding} and at most one plain {@code Content-Length}. Anything else, including a head
 * not yet whole or near Netty's size limits, is "not handled": the parse returns null and leaves the
 * buffer as it was, so the caller hands the same bytes to Netty's decoder and its verdict. On what
 * it does handle it builds the message Netty's decoder builds (names spelled as sent, values
 * trimmed of spaces and tabs), with compact headers that answer as Netty's do ({@link
 * ParsedHeaders}) and also carry the framing facts seen on the way, so that nobody looks them up
 * again.
 *
 * <p>One instance per connection: it remembers the names and values of the previous head (and a
 * request's target) and hands out the same immutable objects when the bytes repeat, which they
 * nearly always do on a keep-alive connection: a whole header block equal to the last one parsed
 * line by line costs one compare, a line equal to the previous head's at its position one compare
 * of its name and one of its value. Confined to the channel's event loop.
 */
final class PlainHead {

  /** Conservatively under Netty's defaults (4096 for the line, 8192 for the header lines). */
  static final int MAX_LINE = HttpObjectDecoder.DEFAULT_MAX_INITIAL_LINE_LENGTH - 64;

  static final int MAX_HEADERS = HttpObjectDecoder.DEFAULT_MAX_HEADER_SIZE - 64;

  /** Headers remembered from the previous request, by position. */
  private static final int REMEMBERED = 32;

  /** Per event loop thread: the copy of a head read from a direct buffer; nothing outlives a parse. */
  private static final ScratchBytes SCRATCH = new ScratchBytes(MAX_LINE + MAX_HEADERS);

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

  /**
   * The names and values of the head being parsed, interleaved; its headers get an exact-size copy.
   * Until a position is parsed again it holds the previous head's name and value there, which
   * the parse hands out again when the bytes repeat. Every name is a token (the TOKEN table) and
   * every value passed a check stricter than Netty's, so neither is checked again.
   */
  private CharSequence[] pairs = new CharSequence[2 * REMEMBERED];

  /** {@link HopByHopHeaders#bitOf} of the names in {@link #pairs}, so a repeated head skips the lookup. */
  private final int[] nameBits = new int[REMEMBERED];

  /**
   * The bytes of the values in {@link #pairs} (set together with them), so a repeated value is
   * recognised by one array comparison instead of a char-by-char walk of its String.
   */
  private final byte[][] valueBytes = new byte[REMEMBERED][];

  /**
   * The header block (first header line to the blank line's end) of the last head parsed line by
   * line, in {@code block[0, blockLength)}; -1: none, or {@link #pairs} no longer hold its names
   * and values. A head whose block repeats it byte for byte gets those names, values and facts back
   * after one vectorized compare, which is the common case on a keep-alive connection: a client
   * sends the same headers with every request, and a server's change once a second (Date).
   */
  private byte[] block = new byte[0];

  private int blockLength = -1;
  private boolean blockOfRequest;
  private int blockCount;
  private int blockHopByHop;
  private int blockTokens;
  private long blockContentLength;

  /** The kept block's written form, made when it first repeats; null until then. */
  private HeaderWire blockWire;

  /** The headers {@link #headers} built last. */
  private ParsedHeaders parsed;
  private String target;
  private byte[] targetBytes; // target's bytes
  private long contentLength = -1;

  /**
   * The request whose head starts at {@code in}'s reader index, with the reader index moved past
   * its blank line; or null, the buffer untouched, when the head is not one this parser handles.
   */
  HttpRequest parseRequest(ByteBuf in) {
    byte[] a = bytes(in);
    int start = a == scratch() ? 0 : in.arrayOffset() + in.readerIndex();
    int end = start + Math.min(in.readableBytes(), MAX_LINE + MAX_HEADERS);

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
    HttpVersion version = version(a, p);
    if (version == null || a[p + 8] != '\r' || a[p + 9] != '\n') {
      return null;
    }
    p += 10;
    p = headers(a, p, end, true);
    if (p < 0) {
      return null;
    }
    ParsedHeaders headers = parsed;
    parsed = null;
    String uri = target;
    if (uri == null || !repeats(targetBytes, a, targetStart, targetLength)) {
      uri = new String(a, targetStart, targetLength, StandardCharsets.ISO_8859_1);
      target = uri;
      targetBytes = Arrays.copyOfRange(a, targetStart, targetStart + targetLength);
    }
    in.skipBytes(p - start);
    return new DefaultHttpRequest(version, method, uri, headers);
  }

  /**
   * The response whose head starts at {@code in}'s reader index, with the reader index moved past
   * its blank line; or null, the buffer untouched, when the head is not one this parser handles:
   * besides what requests must meet, the status line is {@code HTTP/1.x SP 3DIGIT SP reason} with a
   * non-empty reason, the status is 2xx to 5xx, and there is at most one {@code Content-Length},
   * all digits, and no {@code Transfer-Encoding}. {@link #contentLength} then tells the body's
   * length (-1: none given).
   */
  HttpResponse parseResponse(ByteBuf in) {
    byte[] a = bytes(in);
    int start = a == scratch() ? 0 : in.arrayOffset() + in.readerIndex();
    int end = start + Math.min(in.readableBytes(), MAX_LINE + MAX_HEADERS);
    int p = start;
    if (p + 15 > end) {
      return null;
    }
    HttpVersion version = version(a, p);
    if (version == null || a[p + 8] != ' ' || a[p + 12] != ' ') {
      return null;
    }
    int code = 0;
    for (int i = p + 9; i < p + 12; i++) {
      if (a[i] < '0' || a[i] > '9') {
        return null;
      }
      code = code * 10 + a[i] - '0';
    }
    if (code < 200 || code > 599) {
      return null;
    }
    p += 13;
    int reasonStart = p;
    int lineEnd = Math.min(end, start + MAX_LINE);
    while (p < lineEnd && (a[p] >= ' ' && a[p] < 0x7f || a[p] == '\t')) {
      p++;
    }
    if (p == reasonStart || p + 1 >= lineEnd || a[p] != '\r' || a[p + 1] != '\n'
        || a[reasonStart] <= ' ' || a[p - 1] <= ' ') {
      return null; // no reason, or one with spaces at its ends: Netty's decoder trims it
    }
    int reasonEnd = p;
    p += 2;
    contentLength = -1;
    p = headers(a, p, end, false);
    if (p < 0) {
      return null;
    }
    ParsedHeaders headers = parsed;
    parsed = null;
    HttpResponseStatus status = HttpResponseStatus.valueOf(code);
    if (!sameBytes(status.reasonPhrase(), a, reasonStart, reasonEnd - reasonStart)) {
      status = HttpResponseStatus.valueOf(
          code, new String(a, reasonStart, reasonEnd - reasonStart, StandardCharsets.ISO_8859_1));
    }
    in.skipBytes(p - start);
    return new DefaultHttpResponse(version, status, headers);
  }

  /** The Content-Length of the response {@link #parseResponse} returned last, or -1 if it had none. */
  long contentLength() {
    return contentLength;
  }

  /** The head's bytes: the buffer's own array, or a copy of its start in {@link #scratch()}. */
  private static byte[] bytes(ByteBuf in) {
    if (in.hasArray()) {
      return in.array();
    }
    // Socket reads land in direct buffers: one copy of the head (a few hundred bytes) is far
    // cheaper than reading it byte by byte through the buffer's accessors.
    byte[] a = scratch();
    in.getBytes(in.readerIndex(), a, 0, Math.min(in.readableBytes(), a.length));
    return a;
  }

  private static byte[] scratch() {
    return SCRATCH.get();
  }

  private static HttpVersion version(byte[] a, int p) {
    if (CommonHeaderNames.matches(HTTP_1_1, a, p, 8)) {
      return HttpVersion.HTTP_1_1;
    }
    if (CommonHeaderNames.matches(HTTP_1_0, a, p, 8)) {
      return HttpVersion.HTTP_1_0;
    }
    return null;
  }

  /**
   * Reads the header lines from {@code p} on, each name ":" OWS value OWS CRLF, up to and past the
   * blank line, into {@link #parsed}; the index after it, or -1 when a line is not one this parser
   * handles or the head does not end within the limit.
   */
  private int headers(byte[] a, int p, int end, boolean request) {
    int headersEnd = Math.min(end, p + MAX_HEADERS);
    int n = blockLength;
    if (n >= 0 && blockOfRequest == request && p + n <= headersEnd
        && Arrays.equals(block, 0, n, a, p, p + n)) {
      // The same bytes the per-line parse accepted before: the same verdict and the same facts.
      contentLength = blockContentLength;
      parsed = newHeaders(blockCount, blockHopByHop, blockTokens, request);
      if (blockWire == null) {
        blockWire = HeaderWire.of(parsed);
      }
      parsed.wire(blockWire);
      return p + n;
    }
    blockLength = -1; // the parse below overwrites the pairs the kept block's names are in
    int blockStart = p;
    int index = 0;
    int hopByHop = 0;
    int tokens = 0;
    while (true) {
      if (p + 1 >= headersEnd) {
        return -1; // not whole yet, or too big to be sure of the verdict
      }
      if (a[p] == '\r') {
        if (a[p + 1] != '\n') {
          return -1;
        }
        p += 2;
        keepBlock(a, blockStart, p - blockStart, request, index, hopByHop, tokens);
        parsed = newHeaders(index, hopByHop, tokens, request);
        return p;
      }
      // On a keep-alive connection nearly every line repeats the previous head's line at the same
      // position: a name or value found again by one vectorized compare skips its byte-by-byte
      // scan. What was kept passed that scan once, so the verdict is the same.
      int nameStart = p;
      AsciiString sameName = sameName(index, a, p, headersEnd);
      if (sameName != null) {
        p += sameName.length();
      } else {
        while (p < headersEnd && TOKEN[a[p] & 0xff]) {
          p++;
        }
      }
      int nameLength = p - nameStart;
      if (nameLength == 0 || p >= headersEnd || a[p] != ':') {
        return -1;
      }
      p++;
      while (p < headersEnd && (a[p] == ' ' || a[p] == '\t')) {
        p++;
      }
      int valueStart = p;
      int valueEnd = p; // after the last byte that is not a space or tab
      String sameValue = sameValue(index, a, p, headersEnd);
      if (sameValue != null) {
        p += sameValue.length();
        valueEnd = p;
      } else {
        while (p < headersEnd) {
          byte b = a[p];
          if (b == '\r') {
            break;
          }
          if (b > ' ' && b < 0x7f) {
            valueEnd = p + 1;
          } else if (b != ' ' && b != '\t') {
            return -1; // a control byte, DEL or obs-text: Netty's decoder decides
          }
          p++;
        }
      }
      if (p + 1 >= headersEnd || a[p + 1] != '\n') {
        return -1;
      }
      p += 2;
      if (!framing(a, nameStart, nameLength, valueStart, valueEnd, request)) {
        return -1;
      }
      if (2 * index == pairs.length) {
        pairs = Arrays.copyOf(pairs, 2 * pairs.length);
      }
      AsciiString name = sameName != null ? sameName : newName(index, a, nameStart, nameLength);
      int bit = index < REMEMBERED ? nameBits[index] : HopByHopHeaders.bitOf(name);
      String value =
          sameValue != null ? sameValue : value(index, a, valueStart, valueEnd - valueStart);
      if (bit != 0) {
        hopByHop |= bit;
        if (bit == HopByHopHeaders.CONNECTION_BIT) {
          tokens |= ParsedHeaders.tokens(value);
        }
      }
      // A repeated head hands back the objects already there: no store, and so no GC write
      // barrier on this long-lived array.
      if (pairs[2 * index] != name) {
        pairs[2 * index] = name;
      }
      if (pairs[2 * index + 1] != value) {
        pairs[2 * index + 1] = value;
      }
      index++;
    }
  }

  /** Headers holding the first {@code count} names and values in {@link #pairs}. */
  private ParsedHeaders newHeaders(int count, int hopByHop, int tokens, boolean request) {
    // Every value is a String made from ISO-8859-1 bytes: chars below 256 only. A request gets
    // room for two more headers: a relay adds one or two to nearly every request it forwards (the
    // hub a GET's Content-Length and its credentials), and growing the array copied it whole at
    // twice its size. Responses are passed on as they came.
    int room = request ? 4 : 0;
    return new ParsedHeaders(Arrays.copyOf(pairs, 2 * count + room), count, hopByHop, tokens,
        request ? -1 : contentLength, ParsedHeaders.below(count));
  }

  /** Remembers the header block just parsed line by line, and what the parse found in it. */
  private void keepBlock(byte[] a, int start, int length, boolean request, int count, int hopByHop,
      int tokens) {
    if (block.length < length) {
      block = new byte[Math.max(length, 2 * block.length)];
    }
    System.arraycopy(a, start, block, 0, length);
    blockLength = length;
    blockOfRequest = request;
    blockCount = count;
    blockHopByHop = hopByHop;
    blockTokens = tokens;
    blockContentLength = contentLength;
    blockWire = null;
  }

  /**
   * Whether a header line leaves the message one this parser frames: a request has no
   * Content-Length, Transfer-Encoding or Upgrade; a response no Transfer-Encoding and at most one
   * all-digit Content-Length (of at most 9 digits).
   */
  private boolean framing(byte[] a, int name, int nameLength, int value, int valueEnd, boolean request) {
    switch (nameLength) {
      case 7:
        return !request || !equalsIgnoreCase(a, name, "upgrade");
      case 14:
        if (!equalsIgnoreCase(a, name, "content-length")) {
          return true;
        }
        if (request || contentLength >= 0 || valueEnd == value || valueEnd - value > 9) {
          return false;
        }
        long n = 0;
        for (int i = value; i < valueEnd; i++) {
          if (a[i] < '0' || a[i] > '9') {
            return false;
          }
          n = n * 10 + a[i] - '0';
        }
        contentLength = n;
        return true;
      case 17:
        return !equalsIgnoreCase(a, name, "transfer-encoding");
      default:
        return true;
    }
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

  /**
   * The previous head's name at header {@code index} if the line at {@code p} starts with exactly
   * its bytes and a colon, else null.
   */
  private AsciiString sameName(int index, byte[] a, int p, int end) {
    if (index < REMEMBERED && pairs[2 * index] instanceof AsciiString last) {
      int n = last.length();
      if (p + n < end && a[p + n] == ':' && CommonHeaderNames.matches(last, a, p, n)) {
        return last;
      }
    }
    return null;
  }

  /**
   * The previous head's value at header {@code index} if the bytes at {@code p} are exactly its
   * bytes followed by the line's CR, else null.
   */
  private String sameValue(int index, byte[] a, int p, int end) {
    if (index < REMEMBERED && pairs[2 * index + 1] instanceof String last) {
      byte[] kept = valueBytes[index];
      if (kept != null && p + kept.length < end && a[p + kept.length] == '\r'
          && repeats(kept, a, p, kept.length)) {
        return last;
      }
    }
    return null;
  }

  /**
   * The name at header {@code index} when it is not the previous head's there ({@link #sameName}
   * already looked): a common name's constant, else a new one, its hop-by-hop bit remembered.
   */
  private AsciiString newName(int index, byte[] a, int start, int length) {
    AsciiString name = CommonHeaderNames.find(a, start, length);
    if (name == null) {
      name = new AsciiString(a, start, length, true);
    }
    if (index < REMEMBERED) {
      nameBits[index] = HopByHopHeaders.bitOf(name);
    }
    return name;
  }

  /** The value at header {@code index}: the previous head's there if the bytes repeat it. */
  private String value(int index, byte[] a, int start, int length) {
    if (index >= REMEMBERED) {
      return new String(a, start, length, StandardCharsets.ISO_8859_1);
    }
    if (pairs[2 * index + 1] instanceof String last && repeats(valueBytes[index], a, start, length)) {
      return last;
    }
    valueBytes[index] = Arrays.copyOfRange(a, start, start + length);
    return new String(a, start, length, StandardCharsets.ISO_8859_1);
  }

  /** Whether {@code a[start, start + length)} holds exactly the bytes {@code kept} (null: none kept). */
  private static boolean repeats(byte[] kept, byte[] a, int start, int length) {
    return kept != null && Arrays.equals(kept, 0, kept.length, a, start, start + length);
  }

  static boolean sameBytes(String s, byte[] a, int start, int length) {
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
