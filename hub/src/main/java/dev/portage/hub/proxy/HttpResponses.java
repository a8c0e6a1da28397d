package dev.portage.hub.proxy;

import com.fasterxml.jackson.core.io.JsonStringEncoder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import java.nio.charset.StandardCharsets;

/**
 * Builds and sends the hub's own answers: Kubernetes {@code Status} errors (what every Kubernetes
 * client knows how to show) and JSON bodies. Stateless; call from any thread.
 */
public final class HttpResponses {

  private HttpResponses() {}

  /**
   * A {@code Status} failure, e.g. {@code status(503, "ServiceUnavailable", "no API server is
   * healthy")}.
   */
  public static FullHttpResponse status(int code, String reason, String message) {
    String body =
        "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
            + "\"message\":\"" + escape(message) + "\",\"reason\":\"" + escape(reason)
            + "\",\"code\":" + code + "}";
    return json(code, body.getBytes(StandardCharsets.UTF_8));
  }

  /** A JSON response with the given status and body. */
  public static FullHttpResponse json(int code, byte[] body) {
    return json(code, Unpooled.wrappedBuffer(body));
  }

  /** A JSON response with the given status and body; takes ownership of {@code body}. */
  public static FullHttpResponse json(int code, ByteBuf body) {
    return of(code, HttpHeaderValues.APPLICATION_JSON.toString(), body);
  }

  /** A response with the given status, content type and body; takes ownership of {@code body}. */
  public static FullHttpResponse of(int code, String contentType, ByteBuf body) {
    FullHttpResponse r =
        new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.valueOf(code), body);
    r.headers()
        .set(HttpHeaderNames.CONTENT_TYPE, contentType)
        .setInt(HttpHeaderNames.CONTENT_LENGTH, body.readableBytes());
    return r;
  }

  /** A response with the given status, content type and body. */
  public static FullHttpResponse of(int code, String contentType, byte[] body) {
    return of(code, contentType, Unpooled.wrappedBuffer(body));
  }

  /**
   * Writes {@code response} and closes the connection after it unless the client asked to keep it
   * alive.
   */
  public static void send(Channel channel, FullHttpResponse response, boolean keepAlive) {
    HttpUtil.setKeepAlive(response, keepAlive);
    if (keepAlive) {
      // Nothing waits for this write; a failure reaches the pipeline's exceptionCaught (closes).
      channel.writeAndFlush(response, channel.voidPromise());
    } else {
      channel.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
    }
  }

  private static String escape(String s) {
    return new String(JsonStringEncoder.getInstance().quoteAsString(s));
  }
}
