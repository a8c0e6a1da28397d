package dev.portage.core.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;

/**
 * The header lines of one header block that {@link PlainHead} saw repeat, as {@link HeadWriter}
 * writes them: once as parsed, once with the hop-by-hop headers stripped for HTTP/1.1 (what a relay
 * sends on). A relay passes most heads on unchanged or only stripped, so the writer copies these
 * bytes instead of writing every name and value again; the headers say when they still match
 * ({@link ParsedHeaders#wireBytes}). Made once per block a connection repeats (a client's stay the
 * same, a server's change once a second with its Date); immutable, so it may follow a message to
 * another event loop.
 */
final class HeaderWire {

  /** The header lines of the block as parsed, each ending in CRLF (the blank line not included). */
  final byte[] whole;

  /** The same lines after {@link HopByHopHeaders#strip} toward HTTP/1.1. */
  final byte[] stripped;

  private HeaderWire(byte[] whole, byte[] stripped) {
    this.whole = whole;
    this.stripped = stripped;
  }

  /**
   * Both forms of {@code headers}, written by the writer itself so that they cannot differ from
   * what it would write header by header; {@code headers} is left as it is.
   */
  static HeaderWire of(ParsedHeaders headers) {
    HeadWriter writer = new HeadWriter();
    ByteBuf buf = Unpooled.buffer(256);
    try {
      writer.writeHeaders(headers, buf);
      byte[] whole = ByteBufUtil.getBytes(buf);
      buf.clear();
      ParsedHeaders copy = (ParsedHeaders) headers.copy();
      HopByHopHeaders.strip(copy, HttpProtocol.HTTP_1_1);
      writer.writeHeaders(copy, buf);
      return new HeaderWire(whole, ByteBufUtil.getBytes(buf));
    } finally {
      buf.release();
    }
  }
}
