package dev.portage.tunnel.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.portage.core.net.NettyTransport;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.Iterator;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The HTTP CONNECT listener follows its accepted sockets to their agent stream's loop, on real sockets. */
class ListenerAffinityTest {
  private final EventLoopGroup group = NettyTransport.NIO.newEventLoopGroup(3, "listener-affinity-test");
  private final EventLoop[] loops = new EventLoop[3];
  private Channel listener;

  ListenerAffinityTest() {
    Iterator<?> it = group.iterator();
    for (int i = 0; i < loops.length; i++) {
      loops[i] = (EventLoop) it.next();
    }
  }

  @AfterEach
  void tearDown() {
    if (listener != null) {
      listener.close().syncUninterruptibly();
    }
    group.shutdownGracefully(0, 2, java.util.concurrent.TimeUnit.SECONDS).syncUninterruptibly();
  }

  /** A listener starting on loops[0] whose accepted sockets echo one byte and go where {@code preferred} says. */
  private void listen(Supplier<EventLoop> preferred) {
    listener = new ServerBootstrap()
        .group(loops[0], new AgentAffinityGroup(group, preferred))
        .channel(NettyTransport.NIO.serverChannelType())
        .handler(new ListenerAffinity(preferred))
        .childHandler(new ChannelInitializer<>() {
          @Override
          protected void initChannel(Channel ch) {
            ch.pipeline().addLast(new ChannelInboundHandlerAdapter() {
              @Override
              public void channelRead(ChannelHandlerContext ctx, Object msg) {
                ctx.writeAndFlush(msg);
              }
            });
          }
        })
        .bind(new InetSocketAddress("127.0.0.1", 0)).syncUninterruptibly().channel();
  }

  private void echoOnce() throws IOException {
    try (Socket s = new Socket("127.0.0.1", ((InetSocketAddress) listener.localAddress()).getPort())) {
      s.setSoTimeout(10_000);
      s.getOutputStream().write(42);
      assertThat(s.getInputStream().read()).isEqualTo(42);
    }
  }

  @Test
  void theListenerMovesToTheAgentLoopAfterAStreakAndKeepsAccepting() throws Exception {
    listen(() -> loops[1]);
    for (int i = 0; i < ListenerAffinity.STREAK - 1; i++) {
      echoOnce();
    }
    assertThat(listener.eventLoop()).as("not before the streak is complete").isSameAs(loops[0]);
    echoOnce();
    await().atMost(Duration.ofSeconds(10)).until(() -> listener.eventLoop() == loops[1] && listener.isRegistered());
    for (int i = 0; i < 20; i++) {
      echoOnce();
    }
    assertThat(listener.eventLoop()).isSameAs(loops[1]);
    assertThat(listener.isActive()).isTrue();
  }

  @Test
  void theListenerFollowsWhenTheAgentLoopChanges() throws Exception {
    AtomicReference<EventLoop> agentLoop = new AtomicReference<>(loops[1]);
    listen(agentLoop::get);
    for (int i = 0; i < ListenerAffinity.STREAK; i++) {
      echoOnce();
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> listener.eventLoop() == loops[1] && listener.isRegistered());
    agentLoop.set(loops[2]); // that agent went away, another one serves from loops[2]
    for (int i = 0; i < ListenerAffinity.STREAK; i++) {
      echoOnce();
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> listener.eventLoop() == loops[2] && listener.isRegistered());
    echoOnce();
  }

  @Test
  void agentsOnSeveralLoopsOrNoAgentLeaveTheListenerWhereItIs() throws Exception {
    AtomicInteger accepts = new AtomicInteger();
    // Alternating choices never make a streak; null (no agent) resets it.
    listen(() -> {
      int n = accepts.getAndIncrement();
      return n % 3 == 2 ? null : loops[1 + n % 2];
    });
    for (int i = 0; i < 4 * ListenerAffinity.STREAK; i++) {
      echoOnce();
    }
    assertThat(listener.eventLoop()).isSameAs(loops[0]);
  }
}
