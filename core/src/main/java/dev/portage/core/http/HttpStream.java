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

  /** The name of a pooled HTTP/1.1 connection's permanent exchange handler. */
  static final String HANDLER_NAME = "portage-exchange";

  /** The name of a reader added to the pipeline. */
  static final String READER_NAME = "portage-exchange-reader";

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
   * Adds the handler that reads this exchange's response, at the end of the pipeline; the pool
   * removes it when the lease ends. The handler may change the pipeline (e.g. remove itself and the
   * codec for a protocol upgrade). When it does not, {@link #attachReader} is cheaper.
   */
  public HttpStream attach(ChannelHandler handler) {
    Objects.requireNonNull(handler, "handler");
    if (slot == null) {
      channel.pipeline().addLast(READER_NAME, handler);
      return this;
    }
    LoopExecutor.run(channel.eventLoop(), () -> {
      slot.passThrough();
      channel.pipeline().addLast(READER_NAME, handler);
    });
    return this;
  }

  /**
   * Sets the handler that reads this exchange's response without changing the pipeline: on a pooled
   * HTTP/1.1 connection the connection's permanent exchange handler calls it with its own context,
   * as if it sat at its place ({@code handlerAdded} runs on the event loop when set, {@code
   * handlerRemoved} when the lease ends); on an HTTP/2 stream it is added to the stream's pipeline
   * as with {@link #attach}. The handler must not add or remove handlers itself.
   */
  public HttpStream attachReader(ChannelInboundHandler reader) {
    Objects.requireNonNull(reader, "reader");
    if (slot == null) {
      channel.pipeline().addLast(READER_NAME, reader);
      return this;
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

  /** Takes the reader away from a pooled connection; on the event loop. */
  void detach() {
    if (slot != null) {
      if (channel.pipeline().get(READER_NAME) != null) {
        channel.pipeline().remove(READER_NAME);
      }
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
