package dev.portage.core.net;

import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import java.util.Objects;
import java.util.function.LongConsumer;

/**
 * Copies bytes both ways between two connected channels, reading from one side only while the other
 * can take the bytes. {@link #between} turns {@code AUTO_READ} off on both channels, reads again
 * once the peer's outbound buffer is below its high water mark ({@code channelWritabilityChanged}),
 * propagates half-close (input EOF on one side shuts down the other's output after a flush), and
 * closes both channels after a flush when both directions have ended or either side fails or
 * closes.
 *
 * <p>Memory per direction is bounded by the peer's write buffer high water mark plus one read. The
 * channels may live on different event loops (the same loop is cheaper). Stateless; call from any
 * thread.
 *
 * <p>Create both channels with {@code AUTO_READ=false} and {@code ALLOW_HALF_CLOSURE=true} (e.g.
 * {@code childOption(...)}) so nothing is read, and an early EOF does not close the channel, before
 * the relay is installed. Half-close needs {@link io.netty.channel.socket.DuplexChannel}s; on other
 * channels an EOF closes both.
 */
public final class Relay {

  private static final LongConsumer IGNORE = bytes -> {};

  private Relay() {}

  /** Relays between {@code a} and {@code b} without counting bytes. */
  public static void between(Channel a, Channel b) {
    between(a, b, IGNORE, IGNORE);
  }

  /**
   * Relays between {@code a} and {@code b}, reporting relayed bytes per direction.
   *
   * <p>Both channels must be active; bytes either side read before this call are the caller's. If
   * either channel is already inactive, both are closed.
   *
   * @param bytesAToB called with the size of each buffer read from {@code a} and written to {@code
   *     b}, on {@code a}'s event loop; must be cheap and thread-safe (e.g. {@code counter::inc},
   *     {@code LongAdder::add})
   * @param bytesBToA the same for the other direction, on {@code b}'s event loop
   */
  public static void between(Channel a, Channel b, LongConsumer bytesAToB, LongConsumer bytesBToA) {
    Objects.requireNonNull(a, "a");
    Objects.requireNonNull(b, "b");
    Objects.requireNonNull(bytesAToB, "bytesAToB");
    Objects.requireNonNull(bytesBToA, "bytesBToA");
    if (a == b) {
      throw new IllegalArgumentException(
          "a and b: same channel " + a + " (expected: two channels)");
    }
    RelayHandler.Session session = new RelayHandler.Session(a, b);
    for (Channel channel : new Channel[] {a, b}) {
      channel.config().setAutoRead(false);
      channel.config().setOption(ChannelOption.ALLOW_HALF_CLOSURE, true);
    }
    a.pipeline().addLast(RelayHandler.NAME, new RelayHandler(session, b, bytesAToB));
    b.pipeline().addLast(RelayHandler.NAME, new RelayHandler(session, a, bytesBToA));
    if (!a.isActive() || !b.isActive()) {
      session.closeBoth();
      return;
    }
    a.read();
    b.read();
  }
}
