package dev.portage.core.admin;

import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.LastHttpContent;
import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Closes an admin connection that does not deliver a whole request (head and body) within the
 * timeout of the server starting to wait for one: after the accept, and again after each response on
 * a keep-alive connection. A client holding partial requests or idle connections open therefore holds
 * them at most that long. Sits behind the aggregator; one instance per channel, on its event loop; the
 * timer comes from an injected scheduler and hops back to the loop.
 */
final class RequestReadTimeout extends ChannelDuplexHandler {
  private static final Logger log = LoggerFactory.getLogger(RequestReadTimeout.class);

  private final ScheduledExecutorService scheduler;
  private final Duration timeout;
  private ScheduledFuture<?> timer;
  /** Which arming a firing timer belongs to: a timer that fires after being replaced does nothing. */
  private long generation;

  RequestReadTimeout(ScheduledExecutorService scheduler, Duration timeout) {
    this.scheduler = scheduler;
    this.timeout = timeout;
  }

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) {
    arm(ctx);
  }

  @Override
  public void handlerRemoved(ChannelHandlerContext ctx) {
    disarm();
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    disarm();
    ctx.fireChannelInactive();
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (msg instanceof FullHttpRequest) {
      disarm(); // a whole request: the handler answers it
    }
    ctx.fireChannelRead(msg);
  }

  @Override
  public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
    if (msg instanceof LastHttpContent) {
      // The response is complete once written: from then on the connection waits for the next request.
      ctx.write(msg, promise.unvoid()).addListener(f -> {
        if (ctx.channel().isActive()) {
          arm(ctx);
        }
      });
      return;
    }
    ctx.write(msg, promise);
  }

  private void arm(ChannelHandlerContext ctx) {
    disarm();
    long armed = ++generation;
    timer = scheduler.schedule(() -> ctx.executor().execute(() -> {
      if (timer != null && armed == generation && ctx.channel().isActive()) {
        log.debug("{}: no whole request within {}; closing", ctx.channel(), timeout);
        ctx.close();
      }
    }), timeout.toNanos(), TimeUnit.NANOSECONDS);
  }

  private void disarm() {
    if (timer != null) {
      timer.cancel(false);
      timer = null;
    }
  }
}
