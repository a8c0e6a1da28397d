package dev.portage.core.http;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http2.HttpConversionUtil;
import io.netty.util.AsciiString;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

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

  private HopByHopHeaders() {}

  /**
   * Strips hop-by-hop headers in place for a message about to be sent with {@code outbound}.
   *
   * @return whether the message asked to close its connection ({@code Connection: close})
   */
  public static boolean strip(HttpHeaders headers, HttpProtocol outbound) {
    boolean close = false;
    List<String> nominated = new ArrayList<>();
    for (String value : headers.getAll(HttpHeaderNames.CONNECTION)) {
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
    for (HttpConversionUtil.ExtensionHeaderNames ext : HttpConversionUtil.ExtensionHeaderNames.values()) {
      headers.remove(ext.text());
    }
    return close;
  }
}
