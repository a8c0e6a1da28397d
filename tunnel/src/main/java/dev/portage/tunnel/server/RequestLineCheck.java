package dev.portage.tunnel.server;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOption;
import io.netty.handler.codec.ByteToMessageDecoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Checks the request line of an HTTP CONNECT frontend connection before the HTTP codec sees it, at
 * least as strictly as Go's {@code net/http} reads it: {@code METHOD SP target SP HTTP/1.x CRLF} with
 * exactly one space between the parts, a token method, a target without spaces or control characters,
 * HTTP/1.0 or 1.1, and CRLF (Netty's decoder would take runs of spaces and tabs and any version; Go also
 * takes a bare LF, which Netty's strict line parsing does not). A bad line is answered
 * {@code 400 Bad Request}, another HTTP version {@code 505 HTTP Version Not Supported}, and the socket
 * closed; a good one passes on untouched (with whatever followed it) and this handler leaves the
 * pipeline. One instance per channel, on its event loop.
 */
final class RequestLineCheck extends ByteToMessageDecoder {
  private static final Logger log = LoggerFactory.getLogger(RequestLineCheck.class);

  /** Longest request line (Netty's decoder limit), excluding CRLF. */
  static final int MAX_LINE = 4096;

  private static final Pattern LINE =
      Pattern.compile("([!#$%&'*+.^_`|~0-9A-Za-z-]+) ([\\x21-\\x7e]+) (HTTP/[0-9]\\.[0-9])");

  private boolean refused;

  @Override
  protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
    if (refused) {
      in.skipBytes(in.readableBytes()); // anything that was in flight while the refusal is written
      return;
    }
    int eol = in.indexOf(in.readerIndex(), in.writerIndex(), (byte) '\n');
    if (eol < 0) {
      if (in.readableBytes() > MAX_LINE + 1) {
        refuse(ctx, in, 400, "request line longer than " + MAX_LINE + " bytes");
      }
      return;
    }
    if (eol == in.readerIndex() || in.getByte(eol - 1) != '\r') {
      refuse(ctx, in, 400, "request line not ended by CRLF");
      return;
    }
    int end = eol - 1;
    String line = in.toString(in.readerIndex(), end - in.readerIndex(), StandardCharsets.ISO_8859_1);
    Matcher m = LINE.matcher(line);
    if (!m.matches()) {
      refuse(ctx, in, 400, "malformed HTTP request line (expected: METHOD SP target SP HTTP/1.1)");
      return;
    }
    String version = m.group(3);
    if (!version.equals("HTTP/1.1") && !version.equals("HTTP/1.0")) {
      refuse(ctx, in, 505, "unsupported protocol version " + version + " (expected: HTTP/1.0 or HTTP/1.1)");
      return;
    }
    // The bytes stay in the cumulation, which the decoder hands to the HTTP codec on removal.
    ctx.pipeline().remove(this);
  }

  private void refuse(ChannelHandlerContext ctx, ByteBuf in, int status, String why) {
    refused = true;
    log.debug("{}: refused request line: {}", ctx.channel(), why);
    in.skipBytes(in.readableBytes());
    ctx.channel().config().setOption(ChannelOption.AUTO_READ, false);
    ctx.writeAndFlush(HttpStatusResponse.error(ctx.alloc(), status, why)).addListener(ChannelFutureListener.CLOSE);
  }
}
