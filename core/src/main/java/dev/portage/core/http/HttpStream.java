package dev.portage.core.http;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelInboundHandler;
import java.net.InetSocketAddress;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One request/response exchange leased from an {@link HttpClientPool}: an HTTP/1.1 connection or an
 * HTTP/2 stream whose channel speaks Netty {@code HttpObject}s either way (write {@code HttpRequest},
 * {@code HttpContent}s, a {@code LastHttpContent}; read the same for the response). The channel's
 * auto-read is off: call {@code channel().read()} when the reader can take more. End the lease with
 * exactly one of {@link #release()} or {@link #abort()}; later calls do nothing. Thread-safe.
 */
public final class HttpStream {

  static final String HANDLER_NAME = "portage-exchange";

  private final Channel channel;
  private final HttpProtocol protocol;
  private final InetSocketAddress origin;
  private final boolean reused;
  private final Releaser releaser;
  private final ExchangeSlot slot; // null: the reader is added to the pipeline (HTTP/2 streams)
  private final AtomicBoolean ended = new AtomicBoolean();

  /** What the pool does when a lease ends. */
  interface Releaser {
    void end(HttpStream stream, boolean reusable);
  }

  HttpStream(
      Channel channel, HttpProtocol protocol, InetSocketAddress origin, boolean reused,
      Releaser releaser, ExchangeSlot slot) {
    this.channel = channel;
    this.protocol = protocol;
    this.origin = origin;
    this.reused = reused;
    this.releaser = releaser;
    this.slot = slot;
  }

  /** The channel of this exchange; see the class comment for what it carries. */
  public Channel channel() {
    return channel;
  }

  public HttpProtocol protocol() {
    return protocol;
  }

  /** The endpoint this stream is connected to. */
  public InetSocketAddress origin() {
    return origin;
  }

  /**
   * Whether this exchange runs on a connection that carried earlier ones (an idle HTTP/1.1
   * keep-alive connection, a stream on an established h2c connection). Such a connection may have
   * been closed by the origin just as it was leased: a failure before any response byte says nothing
   * about the request itself.
   */
  public boolean isReused() {
    return reused;
  }

  /**
   * Sets the handler that reads this exchange's response, as if at the end of the pipeline (its
   * {@code handlerAdded} runs on the channel's event loop); the pool takes it away when the lease
   * ends. On a pooled HTTP/1.1 connection the handler is called by the connection's permanent
   * exchange handler instead of being added to the pipeline, so it must be a {@link
   * ChannelInboundHandler}; its context is that handler's.
   */
  public HttpStream attach(ChannelHandler handler) {
    Objects.requireNonNull(handler, "handler");
    if (slot == null) {
      channel.pipeline().addLast(HANDLER_NAME, handler);
      return this;
    }
    if (!(handler instanceof ChannelInboundHandler reader)) {
      throw new IllegalArgumentException(
          "handler: " + handler.getClass().getName() + " (expected: a ChannelInboundHandler)");
    }
    LoopExecutor.run(channel.eventLoop(), () -> {
      try {
        slot.attach(reader);
      } catch (Exception e) {
        channel.pipeline().fireExceptionCaught(e);
      }
    });
    return this;
  }

  /** Takes the reader away from a pooled connection's exchange handler; on the event loop. */
  void detach() {
    if (slot != null) {
      slot.detach();
    }
  }

  /**
   * Ends the lease after a complete exchange (request written, response fully read): an HTTP/1.1
   * connection goes back to the idle pool unless {@code Connection: close} was seen; an HTTP/2
   * stream is closed.
   *
   * @param reusable false when either side asked to close the connection or the response was
   *     delimited by the connection closing
   */
  public void release(boolean reusable) {
    if (ended.compareAndSet(false, true)) {
      releaser.end(this, reusable && channel.isActive());
    }
  }

  /** Shortcut for {@code release(true)}. */
  public void release() {
    release(true);
  }

  /** Ends the lease mid-exchange: closes the HTTP/1.1 connection or resets the HTTP/2 stream. */
  public void abort() {
    if (ended.compareAndSet(false, true)) {
      channel.close();
      releaser.end(this, false);
    }
  }

  /** Whether the lease has ended. */
  public boolean isEnded() {
    return ended.get();
  }

  @Override
  public String toString() {
    return "HttpStream{" + protocol + " " + origin + " " + channel.id().asShortText() + '}';
  }
}
