package dev.portage.core.net;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAccumulator;
import java.util.concurrent.atomic.LongAdder;

/**
 * A tiny TCP proxy built from {@link Relay} in front of a plain blocking {@link ServerSocket}, so
 * nothing but the relay under test is Netty. Each accepted client gets a backend connection on the
 * client channel's event loop, HexDumpProxy style.
 */
final class TestRelayProxy implements AutoCloseable {

  static final Duration TIMEOUT = Duration.ofSeconds(20);
  static final int SMALL_BUFFER = 64 * 1024;

  private final EventLoopGroup group;
  private final ServerSocket backend;
  private final Channel listener;
  final Set<Channel> liveChannels = ConcurrentHashMap.newKeySet();
  final LongAdder clientToBackend = new LongAdder();
  final LongAdder backendToClient = new LongAdder();
  final AtomicReference<Channel> lastInbound = new AtomicReference<>();
  final AtomicReference<Channel> lastOutbound = new AtomicReference<>();

  /** Largest outbound backlog toward the backend seen whenever the proxy read from the client. */
  final LongAccumulator maxPendingTowardBackend = new LongAccumulator(Math::max, 0);

  TestRelayProxy(NettyTransport transport) throws Exception {
    group = transport.newEventLoopGroup(2, "relay-test");
    backend = new ServerSocket();
    backend.setReceiveBufferSize(SMALL_BUFFER);
    backend.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
    listener =
        new ServerBootstrap()
            .group(group)
            .channel(transport.serverChannelType())
            // Both before the first byte: an EOF seen earlier would close the channel on epoll.
            .childOption(ChannelOption.AUTO_READ, false)
            .childOption(ChannelOption.ALLOW_HALF_CLOSURE, true)
            .childOption(ChannelOption.SO_SNDBUF, SMALL_BUFFER)
            .childHandler(
                new ChannelInitializer<>() {
                  @Override
                  protected void initChannel(Channel inbound) {
                    track(inbound);
                    lastInbound.set(inbound);
                    inbound.pipeline().addLast(new BacklogProbe());
                    connectBackend(transport, inbound);
                  }
                })
            .bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
            .sync()
            .channel();
  }

  private void connectBackend(NettyTransport transport, Channel inbound) {
    new Bootstrap()
        .group(inbound.eventLoop())
        .channel(transport.channelType())
        .option(ChannelOption.AUTO_READ, false)
        .option(ChannelOption.ALLOW_HALF_CLOSURE, true)
        .option(ChannelOption.SO_SNDBUF, SMALL_BUFFER)
        .handler(new ChannelInboundHandlerAdapter())
        .connect(backend.getLocalSocketAddress())
        .addListener(
            (ChannelFuture connected) -> {
              if (!connected.isSuccess()) {
                inbound.close();
                return;
              }
              Channel outbound = connected.channel();
              track(outbound);
              lastOutbound.set(outbound);
              Relay.between(inbound, outbound, clientToBackend::add, backendToClient::add);
            });
  }

  private void track(Channel channel) {
    liveChannels.add(channel);
    channel.closeFuture().addListener(f -> liveChannels.remove(channel));
  }

  Socket connectClient() throws IOException {
    Socket client = new Socket();
    client.setSoTimeout((int) TIMEOUT.toMillis());
    client.setReceiveBufferSize(SMALL_BUFFER);
    client.connect(listener.localAddress());
    return client;
  }

  Socket acceptBackend() throws IOException {
    Socket accepted = backend.accept();
    accepted.setSoTimeout((int) TIMEOUT.toMillis());
    return accepted;
  }

  /**
   * The half-close a relay must survive, through a new proxy on {@code transport}: the client
   * finishes sending, then the backend sends {@code total} bytes, more than the socket buffers hold,
   * so writes toward the client wait for it to read. Returns the bytes the client got before end of
   * stream or a reset.
   */
  static long bytesAfterClientHalfClose(NettyTransport transport, int total) throws Exception {
    ExecutorService threads = Executors.newSingleThreadExecutor();
    try (TestRelayProxy proxy = new TestRelayProxy(transport);
        Socket client = proxy.connectClient();
        Socket server = proxy.acceptBackend()) {
      client.shutdownOutput();
      assertThat(server.getInputStream().read()).isEqualTo(-1);
      threads.execute(
          () -> {
            try (OutputStream out = server.getOutputStream()) {
              out.write(new byte[total]);
            } catch (IOException reset) {
              // The proxy gave up on the connection; the client's count shows it.
            }
          });
      Channel inbound = proxy.lastInbound.get();
      // The client reads nothing yet, so writes toward it must wait for the socket to drain.
      await().atMost(TIMEOUT).until(() -> !inbound.isWritable() || !inbound.isActive());
      try {
        return client.getInputStream().readAllBytes().length;
      } catch (IOException reset) {
        return 0;
      }
    } finally {
      threads.shutdownNow();
      assertThat(threads.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }
  }

  static long pending(Channel channel) {
    var buffer = channel.unsafe().outboundBuffer();
    return buffer == null ? 0 : buffer.totalPendingWriteBytes();
  }

  @Override
  public void close() throws Exception {
    try {
      listener.close().sync();
      backend.close();
    } finally {
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
    }
  }

  /** Records the backlog toward the backend each time the proxy reads from the client. */
  private final class BacklogProbe extends ChannelInboundHandlerAdapter {
    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      Channel outbound = lastOutbound.get();
      if (outbound != null && msg instanceof ByteBuf) {
        maxPendingTowardBackend.accumulate(pending(outbound));
      }
      ctx.fireChannelRead(msg);
    }
  }
}
