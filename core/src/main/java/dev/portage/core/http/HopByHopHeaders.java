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
 * Proxy-Authenticate}, and Netty's {@code x-http2-*} conversion headers. Stateless; the headers
 * object is mutated by the calling thread only.
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

  /** Every name in {@link #EXTENSIONS} starts with this. */
  private static final AsciiString EXTENSION_PREFIX = AsciiString.cached("x-http2-");

  private HopByHopHeaders() {}

  /**
   * Strips hop-by-hop headers in place for a message about to be sent with {@code outbound}.
   *
   * @return whether the message asked to close its connection ({@code Connection: close})
   */
  public static boolean strip(HttpHeaders headers, HttpProtocol outbound) {
    if (!hasHopByHopName(headers)) {
      // The common request (Host, User-Agent, Accept...): one pass instead of ~15 removals.
      return false;
    }
    boolean close = false;
    // Most messages carry neither Connection nor TE: check before building lists for them.
    List<String> nominated = new ArrayList<>(0);
    List<String> connection =
        headers.contains(HttpHeaderNames.CONNECTION) ? headers.getAll(HttpHeaderNames.CONNECTION) : List.of();
    for (String value : connection) {
      for (String token : value.split(",")) {
        String name = token.trim().toLowerCase(Locale.ROOT);
        if (name.isEmpty()) {
          continue;
        }
        if (name.equals(HttpHeaderValues.CLOSE.toString())) {
          close = true;
        }
        nominated.add(name);
      }
    }
    for (String name : nominated) {
      headers.remove(name);
    }
    for (AsciiString name : FIXED) {
      headers.remove(name);
    }
    boolean trailers = false;
    List<String> te = headers.contains(HttpHeaderNames.TE) ? headers.getAll(HttpHeaderNames.TE) : List.of();
    for (String value : te) {
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
    for (AsciiString name : EXTENSIONS) {
      headers.remove(name);
    }
    return close;
  }

  /** Whether any header is one this class removes (or names more through {@code Connection}). */
  private static boolean hasHopByHopName(HttpHeaders headers) {
    for (Iterator<Map.Entry<CharSequence, CharSequence>> it = headers.iteratorCharSequence(); it.hasNext(); ) {
      CharSequence name = it.next().getKey();
      if (AsciiString.regionMatches(name, true, 0, EXTENSION_PREFIX, 0, EXTENSION_PREFIX.length())
          || AsciiString.contentEqualsIgnoreCase(name, HttpHeaderNames.TE)) {
        return true;
      }
      for (AsciiString hop : FIXED) {
        if (AsciiString.contentEqualsIgnoreCase(name, hop)) {
          return true;
        }
      }
    }
    return false;
  }
}
