package dev.portage.tunnel.server;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoop;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * On the HTTP CONNECT listener's pipeline: moves the listener onto the event loop its accepted sockets
 * are registered on ({@link AgentAffinityGroup}: the agent stream's loop) once that loop has been the
 * choice for {@value #STREAK} accepts in a row. The accept itself then happens on the thread that
 * serves the socket and its agent stream, and the hand-off of every new socket from the listener's
 * thread to the agent's (an event-loop wake-up per dial) is gone. With agents on several loops the
 * choice is random per accept, a streak is rare and the listener stays put rather than chase it.
 *
 * <p>Threading: runs on the listener's current event loop; the move deregisters the listener and
 * registers it on the new loop (connections arriving meanwhile wait in the kernel's backlog).
 */
final class ListenerAffinity extends ChannelInboundHandlerAdapter {
  private static final Logger log = LoggerFactory.getLogger(ListenerAffinity.class);
  /** Consecutive accepts placed on the same other loop before the listener follows. */
  static final int STREAK = 8;

  private final Supplier<EventLoop> preferred;
  private EventLoop candidate;
  private int streak;
  private boolean moving;

  ListenerAffinity(Supplier<EventLoop> preferred) {
    this.preferred = preferred;
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    // msg is the accepted socket: passed on untouched to the ServerBootstrap acceptor
    EventLoop target = preferred.get();
    Channel listener = ctx.channel();
    if (target == null || target == listener.eventLoop()) {
      streak = 0;
    } else if (target == candidate) {
      streak++;
    } else {
      candidate = target;
      streak = 1;
    }
    ctx.fireChannelRead(msg);
  }

  @Override
  public void channelReadComplete(ChannelHandlerContext ctx) {
    ctx.fireChannelReadComplete();
    if (streak >= STREAK && !moving && !candidate.isShuttingDown()) {
      move(ctx.channel(), candidate);
    }
  }

  private void move(Channel listener, EventLoop target) {
    moving = true;
    streak = 0;
    EventLoop from = listener.eventLoop();
    listener.deregister().addListener(d -> {
      if (!d.isSuccess() || !listener.isOpen()) {
        moving = false;
        return;
      }
      target.register(listener).addListener(r -> {
        moving = false;
        if (r.isSuccess()) {
          log.debug("Listener {} moved from {} to its agent stream's loop {}", listener.localAddress(), from, target);
        } else {
          // Not registered anywhere now: go back where it came from so it keeps accepting.
          log.warn("Listener {} could not move to {}: {}; staying on {}", listener.localAddress(), target,
              r.cause().toString(), from);
          from.register(listener);
        }
      });
    });
  }
}
