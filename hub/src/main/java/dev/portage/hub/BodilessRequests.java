package dev.portage.hub;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.EmptyHttpHeaders;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.LastHttpContent;

/**
 * Sits between the HTTP codec and the request aggregator and hands a request without a body (no
 * {@code Content-Length} above 0, no {@code Transfer-Encoding}, no {@code Expect}: a kubelet's GET)
 * straight on as a {@link FullHttpRequest} with empty content, sharing the decoded head and headers.
 * The aggregator would copy the head into a new message and allocate a composite buffer for nothing;
 * requests with a body, and anything unusual, still go through it with its limits and errors. One
 * instance per connection, on its event loop.
 */
final class BodilessRequests extends ChannelInboundHandlerAdapter {

  /** After a bodiless head passed on: the codec's empty end of that message is dropped. */
  private boolean dropEnd;

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (dropEnd && msg instanceof HttpContent content) {
      dropEnd = false;
      if (content instanceof LastHttpContent last && !content.content().isReadable()
          && last.trailingHeaders().isEmpty()) {
        content.release();
        return;
      }
      // Not what the codec sends after a bodiless head; let the aggregator judge it.
      ctx.fireChannelRead(msg);
      return;
    }
    dropEnd = false;
    if (msg instanceof HttpRequest request && !(msg instanceof HttpContent) && bodiless(request)) {
      dropEnd = true;
      ctx.fireChannelRead(full(request));
      return;
    }
    ctx.fireChannelRead(msg);
  }

  /** Whether the head says no body follows and asks nothing of the aggregator. */
  static boolean bodiless(HttpRequest request) {
    if (!request.decoderResult().isSuccess()) {
      return false; // the aggregator passes a failed message on as it always did
    }
    HttpHeaders h = request.headers();
    if (h.contains(HttpHeaderNames.TRANSFER_ENCODING) || h.contains(HttpHeaderNames.EXPECT)) {
      return false;
    }
    String length = h.get(HttpHeaderNames.CONTENT_LENGTH);
    return length == null || length.equals("0");
  }

  private static FullHttpRequest full(HttpRequest request) {
    DefaultFullHttpRequest full = new DefaultFullHttpRequest(request.protocolVersion(),
        request.method(), request.uri(), Unpooled.EMPTY_BUFFER, request.headers(),
        EmptyHttpHeaders.INSTANCE);
    full.setDecoderResult(request.decoderResult());
    return full;
  }
}
