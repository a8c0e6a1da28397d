package dev.portage.core.http;

import io.netty.channel.Channel;
import java.net.InetSocketAddress;

/**
 * A channel to an origin that exchanges are leased on (a pooled HTTP/1.1 connection, an HTTP/2
 * stream), and what its pool does when a lease ends. One per channel, not one per lease: an {@link
 * HttpStream} is the lease's own small handle onto it.
 */
abstract class OriginChannel {

  final Channel channel;
  final HttpProtocol protocol;
  final InetSocketAddress origin;
  final ExchangeSlot slot; // null: the reader is added to the pipeline (HTTP/2 streams)

  OriginChannel(Channel channel, HttpProtocol protocol, InetSocketAddress origin, ExchangeSlot slot) {
    this.channel = channel;
    this.protocol = protocol;
    this.origin = origin;
    this.slot = slot;
  }

  /**
   * Ends {@code lease}, once per lease; any thread. A lease that is not the channel's current one (a
   * handle kept after its end) must change nothing.
   *
   * @param reusable false when the channel must close
   */
  abstract void end(HttpStream lease, boolean reusable);
}
