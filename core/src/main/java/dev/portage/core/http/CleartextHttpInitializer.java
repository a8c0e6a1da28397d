package dev.portage.core.http;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.http2.Http2CodecUtil;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2MultiplexHandler;
import io.netty.handler.codec.http2.Http2StreamChannel;
import io.netty.handler.codec.http2.Http2StreamFrameToHttpObjectCodec;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;

/**
 * Child initializer of a cleartext HTTP listener that speaks HTTP/1.1 and HTTP/2 with prior
 * knowledge on one port, told apart by the HTTP/2 connection preface. Every HTTP/1.1 connection and
 * every HTTP/2 stream gets its own handler from the factory, on a channel that speaks Netty {@code
 * HttpObject}s with auto-read off: the handler calls {@code read()} when it wants the next message.
 * HTTP/1.1 requests come one at a time; an HTTP/2 request without a body arrives as one {@code
 * FullHttpRequest}. Stateless and sharable.
 */
@ChannelHandler.Sharable
public final class CleartextHttpInitializer extends ChannelInitializer<Channel> {

  private final Function<HttpProtocol, ChannelHandler> handlers;

  /** @param handlers makes the handler of one HTTP/1.1 connection or one HTTP/2 stream */
  public CleartextHttpInitializer(Function<HttpProtocol, ChannelHandler> handlers) {
    this.handlers = Objects.requireNonNull(handlers, "handlers");
  }

  @Override
  protected void initChannel(Channel ch) {
    ch.config().setAutoRead(false);
    ch.pipeline().addLast(new PrefaceDetector());
  }

  private void http1(ChannelPipeline p) {
    // The codec does what Netty's HttpServerKeepAliveHandler would: one pipeline hop less.
    p.addLast(new ServerHttpCodec(true)).addLast(handlers.apply(HttpProtocol.HTTP_1_1));
  }

  private void h2(ChannelPipeline p) {
    p.addLast(Http2FrameCodecBuilder.forServer().build())
        .addLast(
            new Http2MultiplexHandler(
                new ChannelInitializer<Http2StreamChannel>() {
                  @Override
                  protected void initChannel(Http2StreamChannel stream) {
                    stream.config().setAutoRead(false);
                    stream
                        .pipeline()
                        .addLast(new Http2StreamFrameToHttpObjectCodec(true))
                        .addLast(handlers.apply(HttpProtocol.H2C));
                  }
                }));
    // Streams share the connection: it always reads; stream flow control holds slow streams back.
    p.channel().config().setAutoRead(true);
  }

  /** Reads until the first bytes tell the HTTP/2 preface from an HTTP/1.1 request line. */
  private final class PrefaceDetector extends ByteToMessageDecoder {
    private final ByteBuf preface = Http2CodecUtil.connectionPrefaceBuf();

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
      ctx.read();
      super.channelActive(ctx);
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
      int n = Math.min(in.readableBytes(), preface.readableBytes());
      boolean h2 = true;
      for (int i = 0; i < n; i++) {
        if (in.getByte(in.readerIndex() + i) != preface.getByte(preface.readerIndex() + i)) {
          h2 = false;
          break;
        }
      }
      if (h2 && n < preface.readableBytes()) {
        ctx.read();
        return;
      }
      ChannelPipeline p = ctx.pipeline();
      if (h2) {
        h2(p);
      } else {
        http1(p);
      }
      // Removing the decoder hands the bytes read so far to the protocol's codec.
      p.remove(this);
    }

    @Override
    protected void handlerRemoved0(ChannelHandlerContext ctx) {
      preface.release();
    }
  }
}
