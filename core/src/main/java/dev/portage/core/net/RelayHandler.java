package dev.portage.core.net;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufHolder;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.channel.socket.DuplexChannel;
import io.netty.util.ReferenceCountUtil;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One direction of a {@link Relay}: forwards what its own channel reads to the peer, and resumes
 * reading on the peer when its own channel becomes writable again. Runs on its channel's event
 * loop; the {@link Session} it shares with the other direction is thread-safe. Ownership of every
 * read message passes to the peer's write, or the message is released here when the peer is gone.
 */
final class RelayHandler extends ChannelInboundHandlerAdapter {

  static final String NAME = "portage-relay";

  private static final Logger log = LoggerFactory.getLogger(RelayHandler.class);

  /** State shared by both directions of one relay. */
  static final class Session {
    private final Channel a;
    private final Channel b;
    private final AtomicInteger directionsDone = new AtomicInteger();
    private final AtomicBoolean closed = new AtomicBoolean();

    Session(Channel a, Channel b) {
      this.a = a;
      this.b = b;
    }

    /** A direction has ended (EOF read and the peer's output shut down); two end the relay. */
    void directionDone() {
      if (directionsDone.incrementAndGet() == 2) {
        closeBoth();
      }
    }

    /** Closes both channels once what is already written to each has been flushed. */
    void closeBoth() {
      if (closed.compareAndSet(false, true)) {
        log.debug("Relay {} <-> {} closing", a, b);
        closeOnFlush(a);
        closeOnFlush(b);
      }
    }

    private static void closeOnFlush(Channel channel) {
      if (channel.isActive()) {
        channel.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
      } else {
        channel.close();
      }
    }
  }

  private final Session session;
  private final Channel peer;
  private final LongConsumer bytesRelayed;

  RelayHandler(Session session, Channel peer, LongConsumer bytesRelayed) {
    this.session = session;
    this.peer = peer;
    this.bytesRelayed = bytesRelayed;
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (!peer.isActive()) {
      ReferenceCountUtil.release(msg);
      session.closeBoth();
      return;
    }
    long bytes = readableBytes(msg);
    // No promise and listener per read: a failed write fires exceptionCaught on the peer's pipeline,
    // where the other direction's handler closes both (or a handler before it closes the peer).
    peer.write(msg, peer.voidPromise());
    if (bytes > 0) {
      bytesRelayed.accept(bytes);
    }
  }

  @Override
  public void channelReadComplete(ChannelHandlerContext ctx) {
    peer.flush();
    // Read on only while the peer can take more; otherwise the peer's writability event resumes us.
    if (peer.isWritable()) {
      ctx.channel().read();
    }
  }

  @Override
  public void channelWritabilityChanged(ChannelHandlerContext ctx) {
    if (ctx.channel().isWritable()) {
      peer.read();
    }
    ctx.fireChannelWritabilityChanged();
  }

  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object event) {
    if (event == ChannelInputShutdownEvent.INSTANCE) {
      log.debug("Relay {} input ended; shutting down output of {}", ctx.channel(), peer);
      shutdownPeerOutput();
    }
    ctx.fireUserEventTriggered(event);
  }

  private void shutdownPeerOutput() {
    if (!(peer instanceof DuplexChannel duplex)) {
      session.closeBoth();
      return;
    }
    // shutdownOutput() fails writes still queued, so flush them first.
    peer.writeAndFlush(Unpooled.EMPTY_BUFFER)
        .addListener(
            (ChannelFuture flushed) -> {
              if (!flushed.isSuccess()) {
                session.closeBoth();
                return;
              }
              duplex
                  .shutdownOutput()
                  .addListener(
                      (ChannelFuture shut) -> {
                        if (shut.isSuccess()) {
                          session.directionDone();
                        } else {
                          session.closeBoth();
                        }
                      });
            });
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    session.closeBoth();
    ctx.fireChannelInactive();
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    // Resets and broken pipes are how TCP peers routinely leave.
    log.debug("Relay channel {} failed", ctx.channel(), cause);
    session.closeBoth();
  }

  private static long readableBytes(Object msg) {
    if (msg instanceof ByteBuf buf) {
      return buf.readableBytes();
    }
    if (msg instanceof ByteBufHolder holder) {
      return holder.content().readableBytes();
    }
    return 0;
  }
}
