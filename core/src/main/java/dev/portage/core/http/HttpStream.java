package dev.portage.core.http;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelInboundHandler;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.net.InetSocketAddress;
import java.util.Objects;

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

  private static final VarHandle ENDED;

  static {
    try {
      ENDED = MethodHandles.lookup().findVarHandle(HttpStream.class, "ended", boolean.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  // A handle per lease, kept small (the channel's state lives in the OriginChannel): a handle kept
  // after its end must never end a later lease of the same connection, so it cannot be shared.
  private final OriginChannel conn;
  private final boolean reused;
  private volatile boolean ended; // through ENDED: no AtomicBoolean per lease

  HttpStream(OriginChannel conn, boolean reused) {
    this.conn = conn;
    this.reused = reused;
  }

  /** The channel of this exchange; see the class comment for what it carries. */
  public Channel channel() {
    return conn.channel;
  }

  public HttpProtocol protocol() {
    return conn.protocol;
  }

  /** The endpoint this stream is connected to. */
  public InetSocketAddress origin() {
    return conn.origin;
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
    Channel channel = conn.channel;
    if (conn.slot == null) {
      channel.pipeline().addLast(READER_NAME, handler);
    } else if (channel.eventLoop().inEventLoop()) {
      passThrough(handler);
    } else {
      channel.eventLoop().execute(() -> passThrough(handler));
    }
    return this;
  }

  private void passThrough(ChannelHandler handler) {
    conn.slot.passThrough();
    conn.channel.pipeline().addLast(READER_NAME, handler);
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
    Channel channel = conn.channel;
    if (conn.slot == null) {
      channel.pipeline().addLast(READER_NAME, reader);
    } else if (channel.eventLoop().inEventLoop()) {
      setReader(reader); // the caller's own loop (a proxied exchange): no task, no lambda
    } else {
      channel.eventLoop().execute(() -> setReader(reader));
    }
    return this;
  }

  private void setReader(ChannelInboundHandler reader) {
    try {
      conn.slot.attach(reader);
    } catch (Exception e) {
      conn.channel.pipeline().fireExceptionCaught(e);
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
    if (ENDED.compareAndSet(this, false, true)) {
      conn.end(this, reusable && conn.channel.isActive());
    }
  }

  /** Shortcut for {@code release(true)}. */
  public void release() {
    release(true);
  }

  /** Ends the lease mid-exchange: closes the HTTP/1.1 connection or resets the HTTP/2 stream. */
  public void abort() {
    if (ENDED.compareAndSet(this, false, true)) {
      conn.channel.close();
      conn.end(this, false);
    }
  }

  /** Whether the lease has ended. */
  public boolean isEnded() {
    return ended;
  }

  @Override
  public String toString() {
    return "HttpStream{" + conn.protocol + " " + conn.origin + " "
        + conn.channel.id().asShortText() + '}';
  }
}
