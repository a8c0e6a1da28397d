package dev.portage.core.http;

import io.netty.handler.codec.http.FullHttpMessage;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpUtil;

/**
 * How a proxied message's body is delimited on the next hop. Read the framing with {@link #hasBody}
 * before {@link HopByHopHeaders#strip} removes {@code Transfer-Encoding}, then {@link #prepare} the
 * message for the outbound protocol: HTTP/1.1 needs {@code Transfer-Encoding: chunked} when a body
 * of unknown length follows; HTTP/2 frames bodies itself. Headers {@link PlainHead} parsed are
 * answered from the facts the parse recorded ({@link ParsedHeaders}), any others by looking them
 * up. Stateless.
 */
public final class HttpFraming {

  private HttpFraming() {}

  /**
   * Whether a body follows {@code message} as received over {@code inbound}.
   *
   * @param requestMethod for responses, the method of the request they answer (HEAD has no body);
   *     ignored for requests
   */
  public static boolean hasBody(HttpMessage message, HttpProtocol inbound, HttpMethod requestMethod) {
    if (message instanceof FullHttpMessage full) {
      return full.content().isReadable();
    }
    if (message instanceof HttpResponse response) {
      int code = response.status().code();
      if (HttpMethod.HEAD.equals(requestMethod) || code / 100 == 1 || code == 204 || code == 304) {
        return false;
      }
      // HTTP/1.1 without a length reads until close; HTTP/2 until END_STREAM: a body either way.
      if (response.headers() instanceof ParsedHeaders parsed && parsed.known()) {
        return parsed.contentLength() != 0;
      }
      return !HttpUtil.isContentLengthSet(response) || HttpUtil.getContentLength(response, 0L) > 0;
    }
    if (message.headers() instanceof ParsedHeaders parsed && parsed.known()) {
      if (parsed.contentLength() >= 0) {
        return parsed.contentLength() > 0;
      }
      if ((parsed.hopByHop() & HopByHopHeaders.TRANSFER_ENCODING_BIT) == 0) {
        return inbound == HttpProtocol.H2C;
      }
    } else if (HttpUtil.isContentLengthSet(message)) {
      return HttpUtil.getContentLength(message, 0L) > 0;
    }
    // An HTTP/1.1 request without length or chunking has no body; an HTTP/2 one without
    // END_STREAM on its HEADERS does.
    return inbound == HttpProtocol.H2C || HttpUtil.isTransferEncodingChunked(message);
  }

  /** Whether {@code message} carries a Content-Length ({@code HttpUtil.isContentLengthSet}). */
  public static boolean isContentLengthSet(HttpMessage message) {
    if (message.headers() instanceof ParsedHeaders parsed && parsed.known()) {
      return parsed.contentLength() >= 0;
    }
    return HttpUtil.isContentLengthSet(message);
  }

  /** Whether {@code message} is chunked ({@code HttpUtil.isTransferEncodingChunked}). */
  public static boolean isChunked(HttpMessage message) {
    if (message.headers() instanceof ParsedHeaders parsed && parsed.known()
        && (parsed.hopByHop() & HopByHopHeaders.TRANSFER_ENCODING_BIT) == 0) {
      return false;
    }
    return HttpUtil.isTransferEncodingChunked(message);
  }

  /** Sets the framing headers {@code message} needs before it is written with {@code outbound}. */
  public static void prepare(HttpMessage message, HttpProtocol outbound, boolean hasBody) {
    if (outbound == HttpProtocol.HTTP_1_1 && hasBody && !isContentLengthSet(message)) {
      HttpUtil.setTransferEncodingChunked(message, true);
    }
  }
}
