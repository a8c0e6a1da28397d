package dev.portage.core.http;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseEncoder;
import io.netty.handler.codec.http.LastHttpContent;
import java.util.List;

/**
 * Netty's HTTP/1.x response encoder with each head written through a {@link HeadWriter}: the same
 * bytes and the same framing decisions (Netty's), one buffer write per head instead of several per
 * header. A whole response with a small fixed-length body ({@link FullHttpResponse}, not chunked,
 * body up to {@link #WHOLE_BODY_LIMIT}) comes out as one buffer, head and body: Netty copies only
 * bodies of up to an eighth of a head, and otherwise emits two buffers, which costs a promise for
 * each and a promise combiner per response, and a two-piece write. Open for the listener codec's
 * encoder, which adds what it knows about the request each response answers. Confined to the
 * channel's event loop.
 */
class Http1ResponseEncoder extends HttpResponseEncoder {

  /** Bodies up to this size are copied behind their head (Netty's decoder emits at most this much). */
  static final int WHOLE_BODY_LIMIT = 8192;

  private static final short CRLF = ('\r' << 8) | '\n';

  private final HeadWriter head = new HeadWriter();

  /** Netty's encoder is between a head and its last content (its own state is private). */
  private boolean midMessage;

  /** The size of the last head written whole, to size the next one's buffer. */
  private int lastHeadSize = 256;

  @Override
  protected final void encodeInitialLine(ByteBuf buf, HttpResponse response) {
    head.lineOf(buf, response);
  }

  @Override
  protected final void encodeHeaders(HttpHeaders headers, ByteBuf buf) {
    head.writeHeaders(headers, buf);
  }

  @Override
  protected void encode(ChannelHandlerContext ctx, Object msg, List<Object> out) throws Exception {
    if (!midMessage && msg instanceof FullHttpResponse whole
        && whole.content().readableBytes() <= WHOLE_BODY_LIMIT && !HttpFraming.isChunked(whole)) {
      encodeWhole(ctx, whole, out);
      return;
    }
    if (msg instanceof HttpMessage && !(msg instanceof LastHttpContent)) {
      midMessage = true; // so Netty's state, also when it refuses the head
    }
    super.encode(ctx, msg, out);
    if (msg instanceof LastHttpContent) {
      midMessage = false;
    }
  }

  /**
   * What Netty writes for a whole response that is not chunked (its head, then its body unless the
   * body is always empty for it), in one buffer. {@link #isContentAlwaysEmpty} is asked exactly
   * once, as Netty does: the listener codec's answer consumes the request it answers.
   */
  private void encodeWhole(ChannelHandlerContext ctx, FullHttpResponse m, List<Object> out) {
    try {
      boolean alwaysEmpty = isContentAlwaysEmpty(m);
      ByteBuf content = m.content();
      int body = alwaysEmpty ? 0 : content.readableBytes();
      ByteBuf buf = ctx.alloc().buffer(lastHeadSize + 64 + body);
      try {
        int start = buf.writerIndex();
        encodeInitialLine(buf, m);
        sanitizeHeadersBeforeEncode(m, alwaysEmpty);
        encodeHeaders(m.headers(), buf);
        buf.writeShort(CRLF);
        lastHeadSize = buf.writerIndex() - start;
        HeadWriter.copy(content, content.readerIndex(), body, buf);
      } catch (RuntimeException e) {
        buf.release();
        throw e;
      }
      out.add(buf);
    } finally {
      m.release();
    }
  }
}
