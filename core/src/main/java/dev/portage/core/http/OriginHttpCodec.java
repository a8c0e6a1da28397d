package dev.portage.core.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.CombinedChannelDuplexHandler;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.EmptyHttpHeaders;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpObjectDecoder;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseDecoder;
import io.netty.util.AsciiString;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayDeque;
import java.util.List;

/**
 * The HTTP/1.1 codec of a pooled origin connection: Netty's request encoder and response decoder,
 * paired like Netty's {@code HttpClientCodec} (each response is matched with the method of its
 * request, so a response to HEAD has no body, and a 2xx to CONNECT turns the connection into raw
 * bytes both ways; informational responses other than 101 do not consume a request), with heads
 * encoded in one piece ({@link Http1RequestEncoder}) and a cheaper header decoder. Netty's response
 * decoder allocates a fresh name for every header line; this one hands out a shared constant when
 * the name is one of the common response headers, byte for byte (case included, so what is relayed
 * is what the origin sent), and the same for the {@code HTTP/1.1} version and the {@code OK}
 * reason. In a profile of the sidecar relaying 1 KiB nginx answers, the response head's decoding
 * was half of the bytes allocated per request, the names a third of that. A plain final response
 * whose head and whole Content-Length body are already buffered (nearly every answer to a small
 * GET) skips Netty's decoder altogether ({@link PlainHead}: the same objects in one {@link
 * FullHttpResponse}, fewer allocations, shared empty trailers); everything else goes to it message
 * by message. A 101 leaves the decoder passing raw bytes on, as Netty's does. Confined to the
 * channel's event loop.
 */
final class OriginHttpCodec
    extends CombinedChannelDuplexHandler<OriginHttpCodec.Decoder, OriginHttpCodec.Encoder> {

  /** Methods of the requests sent and not yet answered, oldest first. */
  private final ArrayDeque<HttpMethod> methods = new ArrayDeque<>(2);

  /** After a 2xx to CONNECT: bytes pass through unparsed both ways. */
  private boolean tunnel;

  OriginHttpCodec() {
    init(new Decoder(), new Encoder());
  }

  /** Request side: Netty's encoder with heads written in one piece ({@link Http1RequestEncoder}). */
  final class Encoder extends Http1RequestEncoder {
    @Override
    protected void encode(ChannelHandlerContext ctx, Object msg, List<Object> out) throws Exception {
      if (tunnel) {
        out.add(ReferenceCountUtil.retain(msg));
        return;
      }
      if (msg instanceof HttpRequest request) {
        methods.add(request.method());
      }
      super.encode(ctx, msg, out);
    }
  }

  final class Decoder extends HttpResponseDecoder {
    private final PlainHead plain = new PlainHead();

    private final DecoderHandoff handoff = new DecoderHandoff();

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) throws Exception {
      if (tunnel) {
        int n = in.readableBytes();
        if (n > 0) {
          out.add(in.readRetainedSlice(n));
        }
        return;
      }
      if (handoff.fastPathOpen() && fast(in, out)) {
        return;
      }
      handoff.delegate();
      int from = out.size();
      super.decode(ctx, in, out);
      handoff.decoded(out, from);
    }

    /**
     * The fast path: a plain final response to a request other than HEAD or CONNECT, its head and
     * its whole Content-Length body (up to Netty's chunk size, so Netty too would emit one piece)
     * already buffered. Emits it as one {@link FullHttpResponse} (the head Netty's decoder would
     * emit, its one last content and shared empty trailers in one message), so a relay writes head
     * and body as one message too: one buffer, one encoder pass, one outbound entry.
     */
    private boolean fast(ByteBuf in, List<Object> out) {
      HttpMethod method = methods.peek();
      if (method == null || HttpMethod.HEAD.equals(method) || HttpMethod.CONNECT.equals(method)) {
        return false;
      }
      int mark = in.readerIndex();
      HttpResponse head = plain.parseResponse(in);
      if (head == null) {
        return false;
      }
      long length = plain.contentLength();
      int code = head.status().code();
      if (length < 0 || length > HttpObjectDecoder.DEFAULT_MAX_CHUNK_SIZE || length > in.readableBytes()
          || code == 204 || code == 304) {
        in.readerIndex(mark);
        return false;
      }
      methods.poll();
      ByteBuf body = length == 0 ? Unpooled.EMPTY_BUFFER : in.readRetainedSlice((int) length);
      out.add(new DefaultFullHttpResponse(
          head.protocolVersion(), head.status(), body, head.headers(), EmptyHttpHeaders.INSTANCE));
      return true;
    }

    @Override
    protected boolean isContentAlwaysEmpty(HttpMessage msg) {
      int code = ((HttpResponse) msg).status().code();
      if (code / 100 == 1 && code != 101) {
        // 100 Continue, 103 Early Hints...: the final answer to the same request follows.
        return super.isContentAlwaysEmpty(msg);
      }
      HttpMethod method = methods.poll(); // null: an answer nobody asked for (the decoder's call)
      if (HttpMethod.HEAD.equals(method)) {
        return true;
      }
      if (HttpMethod.CONNECT.equals(method) && code / 100 == 2) {
        tunnel = true;
        methods.clear();
        return true;
      }
      return super.isContentAlwaysEmpty(msg);
    }

    @Override
    protected AsciiString splitHeaderName(byte[] sb, int start, int length) {
      AsciiString known = CommonHeaderNames.find(sb, start, length);
      return known != null ? known : super.splitHeaderName(sb, start, length);
    }

    @Override
    protected String splitFirstWordInitialLine(byte[] sb, int start, int length) {
      return CommonHeaderNames.matches(HTTP_1_1, sb, start, length)
          ? HTTP_1_1_STRING
          : super.splitFirstWordInitialLine(sb, start, length);
    }

    @Override
    protected String splitThirdWordInitialLine(byte[] sb, int start, int length) {
      return CommonHeaderNames.matches(OK, sb, start, length)
          ? OK_STRING
          : super.splitThirdWordInitialLine(sb, start, length);
    }
  }

  private static final String HTTP_1_1_STRING = "HTTP/1.1";
  private static final AsciiString HTTP_1_1 = AsciiString.cached(HTTP_1_1_STRING);
  private static final String OK_STRING = "OK";
  private static final AsciiString OK = AsciiString.cached(OK_STRING);
}
