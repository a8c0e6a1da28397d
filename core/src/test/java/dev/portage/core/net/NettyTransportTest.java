package dev.portage.core.net;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.uring.IoUring;
import io.netty.channel.local.LocalIoHandler;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class NettyTransportTest {

  @Test
  void bestIsNioUnlessAnotherIsRequested() {
    assertThat(NettyTransport.best())
        .isEqualTo(NettyTransport.choose(System.getProperty(NettyTransport.TRANSPORT_PROPERTY, "nio")));
  }

  @Test
  void forHttpIsIoUringWhereAvailableAndOtherwiseNioUnlessATransportIsNamed() {
    assertThat(NettyTransport.chooseForHttp(null))
        .isEqualTo(IoUring.isAvailable() ? NettyTransport.IO_URING : NettyTransport.NIO);
    assertThat(NettyTransport.chooseForHttp("nio")).isEqualTo(NettyTransport.NIO);
    assertThat(NettyTransport.chooseForHttp("epoll"))
        .isEqualTo(Epoll.isAvailable() ? NettyTransport.EPOLL : NettyTransport.NIO);
  }

  @Test
  void nioTakesPooledBuffersThatKeepTheirByteBufferViewUnlessTheProcessPickedAnAllocator() {
    boolean picked = System.getProperty(NettyTransport.ALLOCATOR_PROPERTY) != null;
    assertThat(NettyTransport.NIO.allocator())
        .isSameAs(picked ? ByteBufAllocator.DEFAULT : PooledByteBufAllocator.DEFAULT);
    assertThat(NettyTransport.EPOLL.allocator()).isSameAs(ByteBufAllocator.DEFAULT);
    // What the choice rests on: NIO asks for this view on every socket read and write.
    ByteBuf buf = NettyTransport.NIO.allocator().directBuffer(1024);
    try {
      buf.writeZero(100);
      assertThat(buf.internalNioBuffer(0, 100)).isSameAs(buf.internalNioBuffer(0, 100));
    } finally {
      buf.release();
    }
  }

  @Test
  void choosesANativeTransportOnRequestWhenItLoads() {
    assertThat(NettyTransport.choose("epoll"))
        .isEqualTo(Epoll.isAvailable() ? NettyTransport.EPOLL : NettyTransport.NIO);
    assertThat(NettyTransport.choose("io_uring"))
        .isEqualTo(IoUring.isAvailable() ? NettyTransport.IO_URING : NettyTransport.NIO);
    assertThat(NettyTransport.choose("nio")).isEqualTo(NettyTransport.NIO);
  }

  @Test
  void withoutHalfCloseIsIoUringThenEpollWhereTheyLoadUnlessATransportIsNamed() {
    assertThat(NettyTransport.chooseWithoutHalfClose(null))
        .isEqualTo(
            IoUring.isAvailable()
                ? NettyTransport.IO_URING
                : Epoll.isAvailable() ? NettyTransport.EPOLL : NettyTransport.NIO);
    assertThat(NettyTransport.chooseWithoutHalfClose("nio")).isEqualTo(NettyTransport.NIO);
    assertThat(NettyTransport.chooseWithoutHalfClose("epoll"))
        .isEqualTo(Epoll.isAvailable() ? NettyTransport.EPOLL : NettyTransport.NIO);
    assertThatThrownBy(() -> NettyTransport.chooseWithoutHalfClose("uring"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("portage.transport: uring (expected: nio, epoll or io_uring)");
  }

  @Test
  void rejectsUnknownTransportName() {
    assertThatThrownBy(() -> NettyTransport.choose("uring"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("portage.transport: uring (expected: nio, epoll or io_uring)");
  }

  @ParameterizedTest
  @EnumSource(NettyTransport.class)
  void echoesOverLoopbackTcp(NettyTransport transport) throws Exception {
    assumeUsable(transport);
    EventLoopGroup group = transport.newEventLoopGroup(1, "test-" + transport.name());
    try {
      Channel server =
          new ServerBootstrap()
              .group(group)
              .channel(transport.serverChannelType())
              .childHandler(new EchoHandler())
              .bind(new InetSocketAddress("127.0.0.1", 0))
              .sync()
              .channel();
      try {
        assertThat(echo(group, transport.channelType(), server.localAddress(), "hello tcp"))
            .isEqualTo("hello tcp");
      } finally {
        server.close().sync();
      }
    } finally {
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
    }
  }

  @ParameterizedTest
  @EnumSource(NettyTransport.class)
  void echoesOverUnixDomainSocket(NettyTransport transport, @TempDir Path dir) throws Exception {
    assumeUsable(transport);
    Path socket = dir.resolve("echo.sock");
    EventLoopGroup group = transport.newEventLoopGroup(1, "test-uds-" + transport.name());
    try {
      Channel server =
          new ServerBootstrap()
              .group(group)
              .channel(transport.serverDomainSocketChannelType())
              .childHandler(new EchoHandler())
              .bind(transport.domainSocketAddress(socket))
              .sync()
              .channel();
      try {
        assertThat(Files.exists(socket)).isTrue();
        assertThat(
                echo(
                    group,
                    transport.domainSocketChannelType(),
                    transport.domainSocketAddress(socket),
                    "hello uds"))
            .isEqualTo("hello uds");
      } finally {
        server.close().sync();
      }
    } finally {
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
    }
  }

  @ParameterizedTest
  @EnumSource(NettyTransport.class)
  void recognisesItsOwnEventLoopGroup(NettyTransport transport) throws Exception {
    assumeUsable(transport);
    EventLoopGroup group = transport.newEventLoopGroup(1, "test-of");
    try {
      assertThat(NettyTransport.of(group)).isEqualTo(transport);
      assertThat(group.next().submit(() -> Thread.currentThread().isDaemon()).get()).isTrue();
    } finally {
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
    }
  }

  @Test
  void rejectsGroupOfAnotherTransport() throws Exception {
    EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, LocalIoHandler.newFactory());
    try {
      assertThatThrownBy(() -> NettyTransport.of(group))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("MultiThreadIoEventLoopGroup")
          .hasMessageContaining("expected: an epoll, io_uring or NIO");
    } finally {
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
    }
  }

  @Test
  void rejectsNegativeThreadCount() {
    assertThatThrownBy(() -> NettyTransport.NIO.newEventLoopGroup(-1, "x"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("threads: -1 (expected: >= 0)");
  }

  private static void assumeUsable(NettyTransport transport) {
    assumeTrue(transport.isAvailable(), transport + " unavailable");
  }

  private static String echo(
      EventLoopGroup group, Class<? extends Channel> type, SocketAddress address, String text)
      throws Exception {
    CompletableFuture<String> reply = new CompletableFuture<>();
    StringBuilder received = new StringBuilder();
    Channel client =
        new Bootstrap()
            .group(group)
            .channel(type)
            .handler(
                new ChannelInitializer<>() {
                  @Override
                  protected void initChannel(Channel ch) {
                    ch.pipeline()
                        .addLast(
                            new SimpleChannelInboundHandler<ByteBuf>() {
                              @Override
                              protected void channelRead0(ChannelHandlerContext ctx, ByteBuf msg) {
                                received.append(msg.toString(StandardCharsets.UTF_8));
                                if (received.length() >= text.length()) {
                                  reply.complete(received.toString());
                                }
                              }
                            });
                  }
                })
            .connect(address)
            .sync()
            .channel();
    try {
      client.writeAndFlush(Unpooled.copiedBuffer(text, StandardCharsets.UTF_8)).sync();
      return reply.get(10, TimeUnit.SECONDS);
    } finally {
      client.close().sync();
    }
  }

  /** Writes every read back; ownership of the buffer passes to the write. */
  @ChannelHandler.Sharable
  private static final class EchoHandler extends ChannelInboundHandlerAdapter {
    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      ctx.writeAndFlush(msg);
    }
  }
}
