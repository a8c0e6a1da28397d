package dev.portage.core.http;

import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpRequestEncoder;

/**
 * Netty's HTTP/1.x request encoder with each head written through a {@link HeadWriter}: the same
 * bytes and the same framing decisions (Netty's), one buffer write per head instead of several per
 * header. Open for the origin codec's encoder, which tracks the methods sent. Confined to the
 * channel's event loop.
 */
class Http1RequestEncoder extends HttpRequestEncoder {

  private final HeadWriter head = new HeadWriter();

  @Override
  protected final void encodeInitialLine(ByteBuf buf, HttpRequest request) {
    head.lineOf(buf, request);
  }

  @Override
  protected final void encodeHeaders(HttpHeaders headers, ByteBuf buf) {
    head.writeHeaders(headers, buf);
  }
}
