package dev.portage.core.http;

import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseEncoder;

/**
 * Netty's HTTP/1.x response encoder with each head written through a {@link HeadWriter}: the same
 * bytes and the same framing decisions (Netty's), one buffer write per head instead of several per
 * header. Open for the listener codec's encoder, which adds what it knows about the request each
 * response answers. Confined to the channel's event loop.
 */
class Http1ResponseEncoder extends HttpResponseEncoder {

  private final HeadWriter head = new HeadWriter();

  @Override
  protected final void encodeInitialLine(ByteBuf buf, HttpResponse response) {
    head.lineOf(buf, response);
  }

  @Override
  protected final void encodeHeaders(HttpHeaders headers, ByteBuf buf) {
    head.writeHeaders(headers, buf);
  }
}
