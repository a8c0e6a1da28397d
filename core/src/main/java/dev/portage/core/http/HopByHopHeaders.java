package dev.portage.core.http;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http2.HttpConversionUtil;
import io.netty.util.AsciiString;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Removes the headers that describe one connection rather than the message (RFC 9110 §7.6.1), as a
 * proxy must before forwarding: {@code Connection} and every header it names, {@code Keep-Alive},
 * {@code Proxy-Connection}, {@code TE} (kept as {@code TE: trailers} toward HTTP/2, the one value
 * HTTP/2 allows), {@code Transfer-Encoding}, {@code Upgrade}, {@code Proxy-Authorization}, {@code
 * Proxy-Authenticate}, and Netty's {@code x-http2-*} conversion headers. Which of them occur is
 * taken from the parse's facts for headers {@link PlainHead} parsed ({@link ParsedHeaders}), from
 * one pass over any others. Stateless; the headers object is mutated by the calling thread only.
 */
public final class HopByHopHeaders {

  private static final List<AsciiString> FIXED =
      List.of(
          HttpHeaderNames.CONNECTION,
          HttpHeaderNames.KEEP_ALIVE,
          AsciiString.cached("proxy-connection"),
          HttpHeaderNames.TRANSFER_ENCODING,
          HttpHeaderNames.UPGRADE,
          HttpHeaderNames.PROXY_AUTHORIZATION,
          HttpHeaderNames.PROXY_AUTHENTICATE);

  /** Netty's conversion headers; {@code values()} clones its array on every call. */
  private static final List<AsciiString> EXTENSIONS =
      Arrays.stream(HttpConversionUtil.ExtensionHeaderNames.values())
          .map(HttpConversionUtil.ExtensionHeaderNames::text)
          .toList();

  /** Bit n set: some name in {@link #FIXED} is n characters long (all are shorter than 63). */
  private static final long FIXED_LENGTHS =
      FIXED.stream().mapToLong(n -> 1L << n.length()).reduce(0L, (a, b) -> a | b);

  /** Every name in {@link #EXTENSIONS} starts with this. */
  private static final AsciiString EXTENSION_PREFIX = AsciiString.cached("x-http2-");

  private HopByHopHeaders() {}

  /**
   * Strips hop-by-hop headers in place for a message about to be sent with {@code outbound}.
   *
   * @return whether the message asked to close its connection ({@code Connection: close})
   */
  public static boolean strip(HttpHeaders headers, HttpProtocol outbound) {
    int present;
    int tokens = -1; // the Connection tokens when the parse recorded them
    ParsedHeaders written = null; // parsed headers that may still equal their written form
    if (headers instanceof ParsedHeaders parsed && parsed.known()) {
      written = parsed;
      present = parsed.hopByHop();
      tokens = parsed.connectionTokens();
    } else {
      present = presentNames(headers);
    }
    if (present == 0) {
      // The common request (Host, User-Agent, Accept...): nothing removed.
      return false;
    }
    byte form = written == null ? 0 : written.wireForm();
    boolean close = false;
    if ((present & CONNECTION_BIT) != 0 && tokens >= 0 && (tokens & ParsedHeaders.OTHER) == 0) {
      // Only close and keep-alive: nothing nominated beyond the fixed names removed below.
      close = (tokens & ParsedHeaders.CLOSE) != 0;
    } else if ((present & CONNECTION_BIT) != 0) {
      List<String> nominated = new ArrayList<>(2);
      Iterator<? extends CharSequence> values =
          headers.valueCharSequenceIterator(HttpHeaderNames.CONNECTION);
      while (values.hasNext()) {
        CharSequence value = values.next();
        // One token, as most messages send it: "keep-alive" names a header the fixed list removes
        // anyway, "close" names none; neither needs the split below.
        if (AsciiString.contentEqualsIgnoreCase(value, HttpHeaderValues.KEEP_ALIVE)) {
          continue;
        }
        if (AsciiString.contentEqualsIgnoreCase(value, HttpHeaderValues.CLOSE)) {
          close = true;
          continue;
        }
        for (String token : value.toString().split(",")) {
          String name = token.trim().toLowerCase(Locale.ROOT);
          if (name.isEmpty()) {
            continue;
          }
          if (name.equals(HttpHeaderValues.CLOSE.toString())) {
            close = true;
          } else if (!name.equals(HttpHeaderValues.KEEP_ALIVE.toString())
              || (present & KEEP_ALIVE_BIT) != 0) {
            // "Connection: keep-alive" (most HTTP/1.1 responses) names a header that is rarely
            // there: only look for it when the pass saw it.
            nominated.add(name);
          }
        }
      }
      for (String name : nominated) {
        headers.remove(name);
      }
    }
    // Only the names the pass saw: each removal hashes and walks a bucket.
    for (int i = 0; i < FIXED.size(); i++) {
      if ((present & (1 << i)) != 0) {
        headers.remove(FIXED.get(i));
      }
    }
    if ((present & TE_BIT) != 0) {
      boolean trailers = false;
      for (String value : headers.getAll(HttpHeaderNames.TE)) {
        for (String token : value.split(",")) {
          if (token.trim().equalsIgnoreCase("trailers")) {
            trailers = true;
          }
        }
      }
      headers.remove(HttpHeaderNames.TE);
      if (trailers && outbound == HttpProtocol.H2C) {
        headers.set(HttpHeaderNames.TE, HttpHeaderValues.TRAILERS);
      }
    }
    if ((present & EXTENSION_BIT) != 0) {
      for (AsciiString name : EXTENSIONS) {
        headers.remove(name);
      }
    }
    if (written != null && outbound == HttpProtocol.HTTP_1_1) {
      written.stripped(form); // what HeaderWire's stripped form is made by
    }
    return close;
  }

  /** Bit i of {@link #presentNames}: {@code FIXED.get(i)} is present. */
  static final int CONNECTION_BIT = 1; // FIXED.get(0)

  static final int KEEP_ALIVE_BIT = 1 << 1; // FIXED.get(1)

  static final int TRANSFER_ENCODING_BIT = 1 << 3; // FIXED.get(3)

  static final int TE_BIT = 1 << 29;

  static final int EXTENSION_BIT = 1 << 30;

  /** The {@link #presentNames} bit of one header name, 0 when it is not a hop-by-hop name. */
  static int bitOf(CharSequence name) {
    int length = name.length();
    // Lengths first: most names (Date, Server, Content-Type...) match no hop-by-hop length, and
    // this runs for every header of every request and response.
    if (length == 2) {
      return AsciiString.contentEqualsIgnoreCase(name, HttpHeaderNames.TE) ? TE_BIT : 0;
    }
    if ((FIXED_LENGTHS & (1L << Math.min(length, 63))) != 0) {
      for (int i = 0; i < FIXED.size(); i++) {
        if (FIXED.get(i).length() == length && AsciiString.contentEqualsIgnoreCase(name, FIXED.get(i))) {
          return 1 << i;
        }
      }
    }
    if (length > EXTENSION_PREFIX.length()
        && AsciiString.regionMatches(name, true, 0, EXTENSION_PREFIX, 0, EXTENSION_PREFIX.length())) {
      return EXTENSION_BIT;
    }
    return 0;
  }

  /**
   * One pass over the headers: which hop-by-hop names occur (bits as above); 0 when none does.
   * Headers nominated by {@code Connection} are found later, from its value.
   */
  private static int presentNames(HttpHeaders headers) {
    int present = 0;
    if (headers instanceof ParsedHeaders parsed) {
      for (int i = 0, n = parsed.size(); i < n; i++) {
        present |= bitOf(parsed.nameAt(i));
      }
      return present;
    }
    for (Iterator<Map.Entry<CharSequence, CharSequence>> it = headers.iteratorCharSequence(); it.hasNext(); ) {
      present |= bitOf(it.next().getKey());
    }
    return present;
  }
}
