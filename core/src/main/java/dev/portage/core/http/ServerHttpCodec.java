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
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpStatusClass;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.nio.channels.ClosedChannelException;
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
 * rather than Netty's result object with the head's sizes.
 *
 * <p>Made {@linkplain #ServerHttpCodec(boolean) with keep-alive}, it also does what Netty's {@code
 * HttpServerKeepAliveHandler} does behind a codec, without a handler of its own in the pipeline:
 * once a request asks to close (or is HTTP/1.0 without {@code keep-alive}), or a final response
 * does or has no length of its own (no Content-Length, not chunked, not multipart, not 204), the
 * answer to the last request counted gets {@code Connection: close} and the connection closes once
 * it is written; requests pipelined after the one that asked to close are still handed on, but not
 * counted, and nothing written after that last response reaches the client (its promise fails as
 * a write to a closed channel would, whether or not the transport has finished the close).
 * Informational responses count for nothing. Confined to the channel's event loop.
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

  /** Whether this codec also keeps the connection alive or closes it, as described above. */
  private final boolean keepAlive;

  /** No request has asked to close and no response has ended the connection. */
  private boolean persistent = true;

  /** Requests counted while {@link #persistent} and not yet answered by a final response. */
  private int unanswered;

  /** A codec for one connection; its handler decides when the connection closes. */
  public ServerHttpCodec() {
    this(false);
  }

  /**
   * A codec for one connection.
   *
   * @param keepAlive whether the codec closes the connection as Netty's keep-alive handler would
   */
  public ServerHttpCodec(boolean keepAlive) {
    this.keepAlive = keepAlive;
    init(new Decoder(), new Encoder());
  }

  /** Netty's keep-alive handler's verdict: another response may follow on this connection. */
  private boolean staysOpen() {
    return unanswered != 0 || persistent;
  }

  /** Whether a client can tell where {@code response} ends without the connection closing. */
  private static boolean delimited(HttpResponse response) {
    return HttpFraming.isContentLengthSet(response)
        || HttpFraming.isChunked(response)
        || isMultipart(response)
        || response.status().codeClass() == HttpStatusClass.INFORMATIONAL
        || response.status().code() == HttpResponseStatus.NO_CONTENT.code();
  }

  private static boolean isMultipart(HttpResponse response) {
    String type = response.headers().get(HttpHeaderNames.CONTENT_TYPE);
    return type != null && type.regionMatches(true, 0, "multipart", 0, "multipart".length());
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
        if (!(out.get(i) instanceof HttpRequest request)) {
          continue;
        }
        if (!enqueue(request.method())) {
          closeAfterResponse = true;
          discard = true;
          for (int j = i; j < size; j++) {
            ReferenceCountUtil.release(out.get(j));
          }
          out.subList(from, size).clear();
          throw new IllegalStateException("maxPipelineDepth exceeded: " + MAX_PIPELINE_DEPTH);
        }
        if (keepAlive && persistent) {
          unanswered++;
          persistent = KeepAlive.isKeepAlive(request);
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

    /** The connection closes once the last response written ends: nothing more may follow it. */
    private boolean closing;

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) throws Exception {
      if (closing) {
        // An answer to a request pipelined after the last one (RFC 9112 9.6). Where writes complete
        // later (io_uring), the close has not happened yet, and this would still reach the client.
        ReferenceCountUtil.release(msg);
        if (!promise.isVoid()) {
          promise.tryFailure(new ClosedChannelException());
        }
        return;
      }
      if (keepAlive && msg instanceof HttpResponse response) {
        track(response);
      }
      boolean close = false;
      if (closeAfterResponse && msg instanceof LastHttpContent) {
        closeAfterResponse = false;
        close = true;
      }
      if (keepAlive && msg instanceof LastHttpContent && !staysOpen()) {
        close = true;
      }
      if (close) {
        closing = true;
        promise = promise.unvoid().addListener(ChannelFutureListener.CLOSE);
      }
      super.write(ctx, msg, promise);
    }

    /** Counts a response against the requests, and says close on it when nothing may follow. */
    private void track(HttpResponse response) {
      if (response.status().codeClass() != HttpStatusClass.INFORMATIONAL) {
        unanswered--;
      }
      if (!KeepAlive.isKeepAlive(response) || !delimited(response)) {
        // The client cannot tell where this answer ends, or it said close: none may follow.
        unanswered = 0;
        persistent = false;
      }
      if (!staysOpen()) {
        HttpUtil.setKeepAlive(response, false);
      }
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
