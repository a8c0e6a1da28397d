package dev.portage.proxy.mesh;

import dev.portage.core.http.HttpClientPool;
import dev.portage.core.http.HttpFraming;
import dev.portage.core.http.HttpStream;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.EmptyHttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import java.net.InetSocketAddress;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.TimeoutException;

/**
 * The endpoint step at the bottom of the stack: leases a stream to the chosen endpoint from the
 * pool (same protocol as the client spoke), writes the head, streams the request body from its
 * replay buffer, and tells the caller's {@link Exchange} the response head, then the end of the
 * response. Cancelling the request aborts the stream.
 *
 * <p>A connection that cannot be opened fails with {@link ProxyException.ConnectFailure}: nothing
 * was sent, and the balance layer sends the request to another endpoint. A bodiless idempotent
 * request whose upstream connection fails before any response arrives (a pooled keep-alive
 * connection the origin had just closed, a reset) is sent once more on another connection, as
 * proxies do for such failures; anything else fails with 502.
 *
 * <p>Callbacks rather than a future per step ({@link Attempt}): a chain of future stages per step
 * was a measurable share of the per-request cost.
 */
final class EndpointDispatch {

  /**
   * What the caller of one dispatch hears: exactly one of {@link #head} and {@link #failed}, then,
   * after a head, {@link #ended} once the response is over (written, discarded or failed). Runs on
   * the upstream channel's event loop or the connect's callback thread.
   */
  interface Exchange {
    void head(ProxyResponse response);

    void failed(Throwable cause);

    /** The response whose head was given ended; {@code body} tells how (trailers, error, discarded). */
    void ended(ResponseBody body);
  }

  private final HttpClientPool pool;

  EndpointDispatch(HttpClientPool pool) {
    this.pool = pool;
  }

  void call(ProxyRequest r, InetSocketAddress endpoint, Exchange exchange) {
    boolean mayResend = !r.body.hasBody() && isIdempotent(r.head.method());
    attempt(r, endpoint, exchange, mayResend);
  }

  /** A failure of the connection itself, not an answer, a timeout or a cancel. */
  private static boolean isConnectionFailure(Throwable e) {
    return e instanceof ProxyException.UpstreamFailure
        || (!(e instanceof ProxyException) && !(e instanceof CancellationException)
            && !(e instanceof TimeoutException));
  }

  private static boolean isIdempotent(HttpMethod m) {
    return m.equals(HttpMethod.GET)
        || m.equals(HttpMethod.HEAD)
        || m.equals(HttpMethod.OPTIONS)
        || m.equals(HttpMethod.TRACE)
        || m.equals(HttpMethod.PUT)
        || m.equals(HttpMethod.DELETE);
  }

  private void attempt(ProxyRequest r, InetSocketAddress endpoint, Exchange exchange, boolean mayResend) {
    HttpStream idle = pool.leaseIdle(endpoint, r.protocol, r.loop);
    if (idle != null) {
      // An idle pooled connection: no future, no stage to wait on.
      new Attempt(r, endpoint, exchange, mayResend).send(idle);
      return;
    }
    CompletableFuture<HttpStream> leased = pool.acquire(endpoint, r.protocol, r.loop);
    if (leased.state() == Future.State.SUCCESS) {
      new Attempt(r, endpoint, exchange, mayResend).send(leased.resultNow());
      return;
    }
    leased.whenComplete((stream, err) -> {
      if (err != null) {
        // Nothing was sent on this connection: not a resend on the same endpoint, but a failure
        // the balance layer answers by taking the endpoint out and picking another.
        exchange.failed(new ProxyException.ConnectFailure(endpoint.toString(), Failures.unwrap(err)));
      } else {
        new Attempt(r, endpoint, exchange, mayResend).send(stream);
      }
    });
  }

  /**
   * One try on one upstream stream; hears its response through {@link ResponseBody.Listener}. As a
   * {@link Runnable} it writes the request, on the stream's event loop.
   */
  private final class Attempt implements ResponseBody.Listener, Runnable {
    private final ProxyRequest r;
    private final InetSocketAddress endpoint;
    private final Exchange exchange;
    private final boolean mayResend;
    private HttpStream stream;
    private Channel ch;
    private ResponseBody response;
    private boolean headGiven;

    Attempt(ProxyRequest r, InetSocketAddress endpoint, Exchange exchange, boolean mayResend) {
      this.r = r;
      this.endpoint = endpoint;
      this.exchange = exchange;
      this.mayResend = mayResend;
    }

    void send(HttpStream stream) {
      this.stream = stream;
      response = new ResponseBody(stream, r.body, this);
      ch = stream.channel();
      if (ch.eventLoop().inEventLoop()) {
        run(); // the usual case: the stream was leased on the caller's loop
      } else {
        ch.eventLoop().execute(this);
      }
    }

    @Override
    public void run() {
      stream.attachReader(response);
      HttpRequest head = r.head;
      // With a body the framing headers are set on a copy; without, the request's own headers
      // are written as they are: the encoders only read them (at write time, on this loop), so a
      // resend or a retry can write them again.
      if (r.body.hasBody()) {
        HttpRequest copy = new DefaultHttpRequest(head.protocolVersion(), head.method(), head.uri(), head.headers().copy());
        HttpFraming.prepare(copy, stream.protocol(), true);
        ch.write(copy);
        r.body.attach(ch);
      } else {
        ch.writeAndFlush(
            new DefaultFullHttpRequest(
                head.protocolVersion(), head.method(), head.uri(), Unpooled.EMPTY_BUFFER,
                head.headers(), EmptyHttpHeaders.INSTANCE),
            ch.voidPromise());
      }
      // Added after the writes are queued so a cancel that races them still finds the stream.
      r.onCancel(response);
    }

    @Override
    public void head(ProxyResponse resp) {
      headGiven = true;
      exchange.head(resp);
    }

    @Override
    public void failed(Throwable cause) {
      if (ch != null) {
        r.body.detach(ch);
      }
      Throwable e = Failures.unwrap(cause);
      if (mayResend && isConnectionFailure(e) && !r.isCancelled()) {
        attempt(r, endpoint, exchange, false);
      } else {
        exchange.failed(e);
      }
    }

    @Override
    public void ended() {
      r.removeOnCancel(response);
      r.body.detach(ch);
      if (headGiven) {
        exchange.ended(response);
      }
    }
  }
}
