package dev.portage.core.http;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.channel.CombinedChannelDuplexHandler;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpRequestDecoder;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpStatusClass;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.util.List;

/**
 * The HTTP/1.1 server codec of a listener, in place of Netty's {@code HttpServerCodec} with the
 * same view for the handlers above it: a request decoder that decodes a plain bodiless request
 * whose head is whole in the buffer itself ({@link PlainHead}: the request, then {@link
 * LastHttpContent#EMPTY_LAST_CONTENT}, as Netty's decoder emits them) and hands every other byte
 * (bodies, chunked, heads not yet whole, upgrades, anything malformed or near the size limits) to
 * Netty's {@code HttpRequestDecoder} at defaults, message by message; and Netty's response encoder
 * (writing each head in one piece, {@link Http1ResponseEncoder}) told the method of the request
 * each response answers (no body after HEAD, no Transfer-Encoding on a 2xx to CONNECT).
 * Informational responses (100 Continue) do not use up the request they precede. Like Netty's codec
 * it refuses more than {@value #MAX_PIPELINE_DEPTH} unanswered requests and closes the connection
 * after the response to a request framed by both Transfer-Encoding and Content-Length. The one
 * difference a handler could see: a request decoded here carries {@link DecoderResult#SUCCESS}
 * rather than Netty's result object with the head's sizes. Confined to the channel's event loop.
 */
public final class ServerHttpCodec
    extends CombinedChannelDuplexHandler<ServerHttpCodec.Decoder, ServerHttpCodec.Encoder> {

  /** Unanswered requests at most, as Netty's codec (more are refused and the connection closed). */
  static final int MAX_PIPELINE_DEPTH = 128;

  private static final byte HEAD = 1;
  private static final byte CONNECT = 2;
  private static final byte OTHER = 3;

  /** Method kinds of the requests decoded and not yet answered, a ring, oldest at {@code first}. */
  private final byte[] pending = new byte[MAX_PIPELINE_DEPTH];

  private int first;
  private int count;

  /** The response to a request with both Transfer-Encoding and Content-Length ends the connection. */
  private boolean closeAfterResponse;

  /** A codec for one connection. */
  public ServerHttpCodec() {
    init(new Decoder(), new Encoder());
  }

  private boolean enqueue(HttpMethod method) {
    if (count == MAX_PIPELINE_DEPTH) {
      return false;
    }
    byte kind = HttpMethod.HEAD.equals(method) ? HEAD : HttpMethod.CONNECT.equals(method) ? CONNECT : OTHER;
    pending[(first + count) % MAX_PIPELINE_DEPTH] = kind;
    count++;
    return true;
  }

  private byte poll() {
    if (count == 0) {
      return OTHER; // a response nobody asked for (an error answer before any request)
    }
    byte kind = pending[first];
    first = (first + 1) % MAX_PIPELINE_DEPTH;
    count--;
    return kind;
  }

  /** Request side: the plain fast path, else Netty's decoder for the whole of the next message. */
  final class Decoder extends HttpRequestDecoder {
    private final PlainHead plain = new PlainHead();

    private final DecoderHandoff handoff = new DecoderHandoff();

    private boolean discard;

    Decoder() {
      super(new HttpDecoderConfig());
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) throws Exception {
      if (discard) {
        in.skipBytes(in.readableBytes());
        return;
      }
      int from = out.size();
      if (handoff.fastPathOpen()) {
        HttpRequest request = plain.parseRequest(in);
        if (request != null) {
          out.add(request);
          out.add(LastHttpContent.EMPTY_LAST_CONTENT);
          track(out, from);
          return;
        }
      }
      handoff.delegate();
      super.decode(ctx, in, out);
      handoff.decoded(out, from);
      track(out, from);
    }

    /** Queues the method of every request just decoded, refusing past the pipeline depth. */
    private void track(List<Object> out, int from) {
      int size = out.size();
      for (int i = from; i < size; i++) {
        if (out.get(i) instanceof HttpRequest request && !enqueue(request.method())) {
          closeAfterResponse = true;
          discard = true;
          for (int j = i; j < size; j++) {
            ReferenceCountUtil.release(out.get(j));
          }
          out.subList(from, size).clear();
          throw new IllegalStateException("maxPipelineDepth exceeded: " + MAX_PIPELINE_DEPTH);
        }
      }
    }

    @Override
    protected void handleTransferEncodingChunkedWithContentLength(HttpMessage message) {
      super.handleTransferEncodingChunkedWithContentLength(message);
      closeAfterResponse = true;
    }
  }

  /**
   * Response side: Netty's encoder with heads written in one piece ({@link Http1ResponseEncoder}),
   * told which request each final response answers.
   */
  final class Encoder extends Http1ResponseEncoder {
    private byte kind = OTHER;

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) throws Exception {
      if (closeAfterResponse && msg instanceof LastHttpContent) {
        closeAfterResponse = false;
        promise = promise.unvoid().addListener(ChannelFutureListener.CLOSE);
      }
      super.write(ctx, msg, promise);
    }

    @Override
    protected boolean isContentAlwaysEmpty(HttpResponse msg) {
      if (msg.status().codeClass() == HttpStatusClass.INFORMATIONAL) {
        return super.isContentAlwaysEmpty(msg); // the final response to the same request follows
      }
      kind = poll();
      return kind == HEAD || super.isContentAlwaysEmpty(msg);
    }

    @Override
    protected void sanitizeHeadersBeforeEncode(HttpResponse msg, boolean isAlwaysEmpty) {
      if (!isAlwaysEmpty && kind == CONNECT && msg.status().codeClass() == HttpStatusClass.SUCCESS) {
        // A 2xx to CONNECT starts a tunnel: it has no framing of its own (RFC 9110 9.3.6).
        msg.headers().remove(HttpHeaderNames.TRANSFER_ENCODING);
        return;
      }
      super.sanitizeHeadersBeforeEncode(msg, isAlwaysEmpty);
    }
  }
}
