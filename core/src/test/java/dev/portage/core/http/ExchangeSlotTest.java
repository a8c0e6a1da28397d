package dev.portage.core.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link ExchangeSlot} driven without sockets: reader hand-over, idle guard, late attach. */
class ExchangeSlotTest {

  /** Records what it is called with; releases what it reads. */
  private static final class Recorder extends ChannelInboundHandlerAdapter {
    final List<String> events = new ArrayList<>();

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
      events.add("added");
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
      events.add("removed");
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      ByteBuf b = (ByteBuf) msg;
      events.add("read " + b.toString(StandardCharsets.US_ASCII));
      b.release();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      events.add("inactive");
    }
  }

  private static ByteBuf bytes(String s) {
    return Unpooled.copiedBuffer(s, StandardCharsets.US_ASCII);
  }

  @Test
  void attachedReaderGetsTheEventsAndTheSlotStaysInThePipeline() throws Exception {
    ExchangeSlot slot = new ExchangeSlot();
    EmbeddedChannel ch = new EmbeddedChannel(slot);
    Recorder first = new Recorder();
    slot.attach(first);
    ch.writeInbound(bytes("one"));
    slot.detach();
    Recorder second = new Recorder();
    slot.attach(second);
    ch.writeInbound(bytes("two"));
    slot.detach();

    assertThat(first.events).containsExactly("added", "read one", "removed");
    assertThat(second.events).containsExactly("added", "read two", "removed");
    assertThat(ch.pipeline().last()).isSameAs(slot);
    assertThat(ch.isOpen()).isTrue();
    ch.finishAndReleaseAll();
  }

  @Test
  void idleSlotClosesTheConnectionOnUnaskedBytesAndReleasesThem() {
    ExchangeSlot slot = new ExchangeSlot();
    EmbeddedChannel ch = new EmbeddedChannel(slot);
    ByteBuf unasked = bytes("HTTP/1.1 200 OK\r\n\r\n");
    ch.writeInbound(unasked);
    assertThat(unasked.refCnt()).isZero();
    assertThat(ch.isOpen()).isFalse();
  }

  @Test
  void readerAttachedAfterTheConnectionClosedHearsOfIt() throws Exception {
    ExchangeSlot slot = new ExchangeSlot();
    EmbeddedChannel ch = new EmbeddedChannel(slot);
    ch.close();
    Recorder late = new Recorder();
    slot.attach(late);
    assertThat(late.events).containsExactly("added", "inactive");
  }

  @Test
  void secondReaderWhileOneIsAttachedIsRefused() throws Exception {
    ExchangeSlot slot = new ExchangeSlot();
    EmbeddedChannel ch = new EmbeddedChannel(slot);
    slot.attach(new Recorder());
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> slot.attach(new Recorder()))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("exchange slot already has a reader");
    ch.finishAndReleaseAll();
  }

  @Test
  void passThroughLetsEventsReachTheNextHandlerUntilDetached() {
    ExchangeSlot slot = new ExchangeSlot();
    Recorder next = new Recorder();
    EmbeddedChannel ch = new EmbeddedChannel(slot, next);
    slot.passThrough();
    ch.writeInbound(bytes("upgraded"));
    assertThat(next.events).containsExactly("added", "read upgraded");
    assertThat(ch.isOpen()).isTrue();

    slot.detach();
    ByteBuf unasked = bytes("late");
    ch.writeInbound(unasked);
    assertThat(next.events).doesNotContain("read late");
    assertThat(unasked.refCnt()).isZero();
    assertThat(ch.isOpen()).isFalse();
  }
}
