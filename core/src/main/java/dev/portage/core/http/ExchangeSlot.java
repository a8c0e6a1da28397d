package dev.portage.core.http;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandler;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.ReferenceCountUtil;

/**
 * The permanent handler of a pooled HTTP/1.1 connection, after its codec. While idle it guards the
 * connection (anything an idle connection receives is a protocol error that closes it). During a
 * lease it either hands every inbound event to the lease's reader ({@link #attach}: no pipeline
 * change per exchange; each change takes a lock, allocates a context and runs callbacks, a
 * measurable share of a proxied request's cost) or passes events on to a handler the lease added
 * to the pipeline ({@link #passThrough}; for readers that change the pipeline themselves, such as
 * a protocol upgrade).
 *
 * <p>An attached reader sees the events through this handler's context, as if it sat at its place
 * in the pipeline: its {@code handlerAdded} runs when attached, its {@code handlerRemoved} when
 * detached. Confined to the channel's event loop.
 */
final class ExchangeSlot extends ChannelInboundHandlerAdapter {

  private ChannelHandlerContext ctx;
  private ChannelInboundHandler reader; // null while idle or passing through
  private boolean passThrough;

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) {
    this.ctx = ctx;
  }

  /** Makes {@code handler} the reader of the next exchange; on the event loop. */
  void attach(ChannelInboundHandler handler) throws Exception {
    if (reader != null || passThrough) {
      throw new IllegalStateException("exchange slot already has a reader: " + reader);
    }
    reader = handler;
    handler.handlerAdded(ctx);
    if (!ctx.channel().isActive() && reader == handler) {
      // Closed while the lease was being set up: the reader must still hear of it.
      handler.channelInactive(ctx);
    }
  }

  /** Lets events through to the next handlers until {@link #detach}; on the event loop. */
  void passThrough() {
    if (reader != null) {
      throw new IllegalStateException("exchange slot already has a reader: " + reader);
    }
    passThrough = true;
  }

  /**
   * Ends the current exchange; later events reach the idle guard. On the event loop.
   *
   * @return whether it was passing events through (a reader in the pipeline may need removing)
   */
  boolean detach() {
    boolean passedThrough = passThrough;
    passThrough = false;
    ChannelInboundHandler r = reader;
    if (r == null) {
      return passedThrough;
    }
    reader = null;
    try {
      r.handlerRemoved(ctx);
    } catch (Exception e) {
      ctx.fireExceptionCaught(e);
    }
    return false;
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
    ChannelInboundHandler r = reader;
    if (r != null) {
      r.channelRead(ctx, msg);
    } else if (passThrough) {
      ctx.fireChannelRead(msg);
    } else {
      // An origin must not speak unasked.
      ReferenceCountUtil.release(msg);
      ctx.close();
    }
  }

  @Override
  public void channelReadComplete(ChannelHandlerContext ctx) throws Exception {
    ChannelInboundHandler r = reader;
    if (r != null) {
      r.channelReadComplete(ctx);
    } else if (passThrough) {
      ctx.fireChannelReadComplete();
    }
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) throws Exception {
    ChannelInboundHandler r = reader;
    if (r != null) {
      r.channelInactive(ctx);
    } else {
      ctx.fireChannelInactive();
    }
  }

  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
    ChannelInboundHandler r = reader;
    if (r != null) {
      r.userEventTriggered(ctx, evt);
    } else if (passThrough) {
      ctx.fireUserEventTriggered(evt);
    } else {
      ReferenceCountUtil.release(evt);
    }
  }

  @Override
  public void channelWritabilityChanged(ChannelHandlerContext ctx) throws Exception {
    ChannelInboundHandler r = reader;
    if (r != null) {
      r.channelWritabilityChanged(ctx);
    } else if (passThrough) {
      ctx.fireChannelWritabilityChanged();
    }
  }

  @Override
  @SuppressWarnings("deprecation")
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) throws Exception {
    ChannelInboundHandler r = reader;
    if (r != null) {
      r.exceptionCaught(ctx, cause);
    } else if (passThrough) {
      ctx.fireExceptionCaught(cause);
    } else {
      ctx.close();
    }
  }
}
