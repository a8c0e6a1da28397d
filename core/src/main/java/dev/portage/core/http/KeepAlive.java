package dev.portage.core.http;

import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpUtil;

/**
 * Whether an HTTP/1.x message lets its connection carry another one, as Netty's {@code
 * HttpUtil.isKeepAlive} decides (no {@code close} token in {@code Connection}, and HTTP/1.1 or a
 * {@code keep-alive} token), answered from the facts the parse recorded when the headers are ones
 * {@link PlainHead} parsed and still describe. Stateless.
 */
public final class KeepAlive {

  private KeepAlive() {}

  /** Whether {@code message} keeps its connection open. */
  public static boolean isKeepAlive(HttpMessage message) {
    if (message.headers() instanceof ParsedHeaders parsed && parsed.known()) {
      int tokens = parsed.connectionTokens();
      if ((tokens & ParsedHeaders.CLOSE) != 0) {
        return false;
      }
      return message.protocolVersion().isKeepAliveDefault() || (tokens & ParsedHeaders.KEEP_ALIVE) != 0;
    }
    return HttpUtil.isKeepAlive(message);
  }
}
