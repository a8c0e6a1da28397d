package dev.portage.core.net;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.util.ReferenceCountUtil;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Test;

/** {@link Relay} paths that need no sockets, driven through {@link EmbeddedChannel}s. */
class RelayTest {

  private final EmbeddedChannel a = new EmbeddedChannel();
  private final EmbeddedChannel b = new EmbeddedChannel();
  private final LongAdder aToB = new LongAdder();
  private final LongAdder bToA = new LongAdder();

  @Test
  void forwardsEachWayAndCountsBytes() {
    Relay.between(a, b, aToB::add, bToA::add);

    a.writeInbound(Unpooled.copiedBuffer("ping", StandardCharsets.US_ASCII));
    b.writeInbound(Unpooled.copiedBuffer("pong!", StandardCharsets.US_ASCII));

    assertThat(readText(b)).isEqualTo("ping");
    assertThat(readText(a)).isEqualTo("pong!");
    assertThat(aToB.sum()).isEqualTo(4);
    assertThat(bToA.sum()).isEqualTo(5);
    assertThat(a.config().isAutoRead()).isFalse();
    assertThat(b.config().isAutoRead()).isFalse();
    assertThat(finish(a)).isFalse();
    assertThat(finish(b)).isFalse();
  }

  @Test
  void bufferReadAfterThePeerClosedIsReleasedAndClosesBoth() {
    EmbeddedChannel peer = new EmbeddedChannel();
    peer.close();
    EmbeddedChannel self = new EmbeddedChannel();
    self.pipeline()
        .addLast(new RelayHandler(new RelayHandler.Session(self, peer), peer, aToB::add));
    ByteBuf late = Unpooled.copiedBuffer("late", StandardCharsets.US_ASCII);

    self.writeInbound(late);

    assertThat(late.refCnt()).isZero();
    assertThat(aToB.sum()).isZero();
    assertThat(self.isOpen()).isFalse();
    assertThat(finish(self)).isFalse();
    assertThat(peer.finish()).isFalse();
  }

  @Test
  void closingOneSideClosesTheOtherAfterFlushing() {
    Relay.between(a, b);
    a.writeInbound(Unpooled.copiedBuffer("bye", StandardCharsets.US_ASCII));

    a.close();

    assertThat(b.isOpen()).isFalse();
    assertThat(readText(b)).isEqualTo("bye");
    assertThat(finish(a)).isFalse();
    assertThat(finish(b)).isFalse();
  }

  @Test
  void aWriteThePeerFailsClosesBothAndReleasesTheBuffer() {
    Relay.between(a, b, aToB::add, bToA::add);
    b.pipeline()
        .addFirst(
            new ChannelOutboundHandlerAdapter() {
              @Override
              public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
                ReferenceCountUtil.release(msg);
                promise.setFailure(new IOException("Broken pipe"));
              }
            });
    ByteBuf lost = Unpooled.copiedBuffer("lost", StandardCharsets.US_ASCII);

    a.writeInbound(lost);

    assertThat(lost.refCnt()).isZero();
    assertThat(a.isOpen()).isFalse();
    assertThat(b.isOpen()).isFalse();
    assertThat(finish(a)).isFalse();
    assertThat(finish(b)).isFalse();
  }

  @Test
  void inputEndTowardAPeerWithoutHalfCloseClosesBoth() {
    Relay.between(a, b);

    a.pipeline().fireUserEventTriggered(ChannelInputShutdownEvent.INSTANCE);

    assertThat(a.isOpen()).isFalse();
    assertThat(b.isOpen()).isFalse();
    assertThat(finish(a)).isFalse();
    assertThat(finish(b)).isFalse();
  }

  @Test
  void inactiveChannelClosesBoth() {
    b.close();

    Relay.between(a, b);

    assertThat(a.isOpen()).isFalse();
    assertThat(finish(a)).isFalse();
  }

  @Test
  void rejectsRelayingAChannelToItself() {
    assertThatThrownBy(() -> Relay.between(a, a))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("(expected: two channels)");
    assertThat(a.finish()).isFalse();
  }

  /**
   * Closes {@code channel}, drops the empty flush markers the relay writes before closing, and
   * reports whether anything else was left ({@link EmbeddedChannel#finish()}).
   */
  private static boolean finish(EmbeddedChannel channel) {
    channel.close();
    assertThat(readText(channel)).isEmpty();
    return channel.finish();
  }

  private static String readText(EmbeddedChannel channel) {
    StringBuilder text = new StringBuilder();
    for (ByteBuf buf = channel.readOutbound(); buf != null; buf = channel.readOutbound()) {
      try {
        text.append(buf.toString(StandardCharsets.US_ASCII));
      } finally {
        buf.release();
      }
    }
    return text.toString();
  }
}
