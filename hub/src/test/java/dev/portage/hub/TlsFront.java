package dev.portage.hub;

import dev.portage.core.net.NettyTransport;
import dev.portage.core.net.Relay;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import io.netty.util.ReferenceCountUtil;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

/**
 * A TLS terminator in front of a plain HTTP API server (the fabric8 mock speaks plain HTTP), so the
 * hub's client TLS can be tested for real: it requires a client certificate from the given CA,
 * records each client's subject, and relays bytes to the API server. Test fixture; thread-safe.
 */
final class TlsFront implements AutoCloseable {

  private final EventLoopGroup group = NettyTransport.best().newEventLoopGroup(1, "tls-front");
  private final Channel server;
  /** Subjects of the client certificates of completed handshakes, in order. */
  final Queue<String> clientSubjects = new ConcurrentLinkedQueue<>();
  /** Handshakes that failed (no or untrusted client certificate). */
  final Queue<Throwable> failedHandshakes = new ConcurrentLinkedQueue<>();

  TlsFront(SslContext tls, InetSocketAddress backend) {
    ChannelFuture f = new ServerBootstrap()
        .group(group)
        .channel(NettyTransport.of(group).serverChannelType())
        .childHandler(new ChannelInitializer<>() {
          @Override
          protected void initChannel(Channel ch) {
            ch.pipeline().addLast("tls", tls.newHandler(ch.alloc()))
                .addLast("front", new Front(backend));
          }
        })
        .bind("127.0.0.1", 0)
        .syncUninterruptibly();
    server = f.channel();
  }

  int port() {
    return ((InetSocketAddress) server.localAddress()).getPort();
  }

  @Override
  public void close() {
    server.close().syncUninterruptibly();
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
  }

  /** Holds what the client sends until the backend connection is up, then becomes a relay. */
  private final class Front extends ChannelInboundHandlerAdapter {
    private final InetSocketAddress backend;
    private final List<Object> early = new ArrayList<>();

    Front(InetSocketAddress backend) {
      this.backend = backend;
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
      if (!(evt instanceof SslHandshakeCompletionEvent done)) {
        ctx.fireUserEventTriggered(evt);
        return;
      }
      if (!done.isSuccess()) {
        failedHandshakes.add(done.cause());
        ctx.close();
        return;
      }
      SslHandler ssl = ctx.pipeline().get(SslHandler.class);
      clientSubjects.add(ssl.engine().getSession().getPeerPrincipal().getName());
      Channel client = ctx.channel();
      client.config().setAutoRead(false);
      new Bootstrap().group(client.eventLoop())
          .channel(NettyTransport.of(group).channelType())
          .option(ChannelOption.AUTO_READ, false)
          .handler(new ChannelInboundHandlerAdapter())
          .connect(backend)
          .addListener((ChannelFutureListener) c -> {
            if (!c.isSuccess()) {
              client.close();
              return;
            }
            Channel up = c.channel();
            for (Object m : early) {
              up.write(m);
            }
            early.clear();
            up.flush();
            client.pipeline().remove(this);
            Relay.between(client, up);
          });
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      early.add(msg);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      early.forEach(ReferenceCountUtil::release);
      early.clear();
      ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      ctx.close();
    }
  }
}
