package dev.portage.proxy.mesh;

import dev.portage.core.http.HttpClientPool;
import dev.portage.core.http.HttpFraming;
import dev.portage.core.http.HttpStream;
import dev.portage.core.http.LoopExecutor;
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
 * replay buffer, and completes with the response head. Cancelling the request aborts the stream.
 *
 * <p>A bodiless idempotent request whose upstream connection fails before any response arrives (a
 * pooled keep-alive connection the origin had just closed, a reset) is sent once more on another
 * connection, as proxies do for such failures; anything else fails with 502.
 *
 * <p>One future per request, completed from callbacks ({@link Attempt}): a chain of future stages
 * per step was a measurable share of the per-request cost.
 */
final class EndpointDispatch {

  private final HttpClientPool pool;

  EndpointDispatch(HttpClientPool pool) {
    this.pool = pool;
  }

  CompletableFuture<ProxyResponse> call(ProxyRequest r, InetSocketAddress endpoint) {
    CompletableFuture<ProxyResponse> result = new CompletableFuture<>();
    boolean mayResend = !r.body.hasBody() && isIdempotent(r.head.method());
    attempt(r, endpoint, result, mayResend);
    return result;
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

  private void attempt(
      ProxyRequest r, InetSocketAddress endpoint, CompletableFuture<ProxyResponse> result, boolean mayResend) {
    CompletableFuture<HttpStream> leased = pool.acquire(endpoint, r.protocol, r.loop);
    if (leased.state() == Future.State.SUCCESS) {
      // An idle pooled connection: no stage to wait on.
      new Attempt(r, endpoint, result, mayResend).send(leased.resultNow());
      return;
    }
    leased.whenComplete((stream, err) -> {
      Attempt a = new Attempt(r, endpoint, result, mayResend);
      if (err != null) {
        a.failed(new ProxyException.UpstreamFailure("connect " + endpoint, Failures.unwrap(err)));
      } else {
        a.send(stream);
      }
    });
  }

  /** One try on one upstream stream; hears its response through {@link ResponseBody.Listener}. */
  private final class Attempt implements ResponseBody.Listener {
    private final ProxyRequest r;
    private final InetSocketAddress endpoint;
    private final CompletableFuture<ProxyResponse> result;
    private final boolean mayResend;
    private Channel ch;
    private Runnable abort;

    Attempt(
        ProxyRequest r, InetSocketAddress endpoint, CompletableFuture<ProxyResponse> result, boolean mayResend) {
      this.r = r;
      this.endpoint = endpoint;
      this.result = result;
      this.mayResend = mayResend;
    }

    void send(HttpStream stream) {
      ResponseBody response = new ResponseBody(stream, r.body, this);
      ch = stream.channel();
      abort = response::discard;
      LoopExecutor.run(ch.eventLoop(), () -> {
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
        r.onCancel(abort);
      });
    }

    @Override
    public void head(ProxyResponse response) {
      result.complete(response);
    }

    @Override
    public void failed(Throwable cause) {
      if (ch != null) {
        r.body.detach(ch);
      }
      Throwable e = Failures.unwrap(cause);
      if (mayResend && isConnectionFailure(e) && !r.isCancelled()) {
        attempt(r, endpoint, result, false);
      } else {
        result.completeExceptionally(e);
      }
    }

    @Override
    public void ended() {
      r.removeOnCancel(abort);
      r.body.detach(ch);
    }
  }
}
