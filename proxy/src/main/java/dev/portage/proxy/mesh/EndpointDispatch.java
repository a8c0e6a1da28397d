package dev.portage.proxy.mesh;

import dev.portage.core.http.HttpClientPool;
import dev.portage.core.http.HttpFraming;
import dev.portage.core.http.HttpStream;
import dev.portage.core.http.LoopExecutor;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.HttpRequest;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;

/**
 * The endpoint step at the bottom of the stack: leases a stream to the chosen endpoint from the
 * pool (same protocol as the client spoke), writes the head, streams the request body from its
 * replay buffer, and completes with the response head. Cancelling the request aborts the stream.
 *
 * <p>A bodiless idempotent request whose upstream connection fails before any response arrives (a
 * pooled keep-alive connection the origin had just closed, a reset) is sent once more on another
 * connection, as proxies do for such failures; anything else fails with 502.
 */
final class EndpointDispatch {

  private final HttpClientPool pool;

  EndpointDispatch(HttpClientPool pool) {
    this.pool = pool;
  }

  CompletableFuture<ProxyResponse> call(ProxyRequest r, InetSocketAddress endpoint) {
    CompletableFuture<ProxyResponse> first = attempt(r, endpoint);
    if (r.body.hasBody() || !isIdempotent(r.head.method())) {
      return first;
    }
    CompletableFuture<ProxyResponse> result = new CompletableFuture<>();
    first.whenComplete((resp, err) -> {
      if (err == null) {
        result.complete(resp);
      } else if (isConnectionFailure(Failures.unwrap(err))) {
        attempt(r, endpoint).whenComplete((again, err2) -> {
          if (err2 == null) {
            result.complete(again);
          } else {
            result.completeExceptionally(err2);
          }
        });
      } else {
        result.completeExceptionally(err);
      }
    });
    return result;
  }

  /** A failure of the connection itself, not an answer, a timeout or a cancel. */
  private static boolean isConnectionFailure(Throwable e) {
    return e instanceof ProxyException.UpstreamFailure
        || (!(e instanceof ProxyException) && !(e instanceof java.util.concurrent.CancellationException)
            && !(e instanceof java.util.concurrent.TimeoutException));
  }

  private static boolean isIdempotent(io.netty.handler.codec.http.HttpMethod m) {
    return m.equals(io.netty.handler.codec.http.HttpMethod.GET)
        || m.equals(io.netty.handler.codec.http.HttpMethod.HEAD)
        || m.equals(io.netty.handler.codec.http.HttpMethod.OPTIONS)
        || m.equals(io.netty.handler.codec.http.HttpMethod.TRACE)
        || m.equals(io.netty.handler.codec.http.HttpMethod.PUT)
        || m.equals(io.netty.handler.codec.http.HttpMethod.DELETE);
  }

  private CompletableFuture<ProxyResponse> attempt(ProxyRequest r, InetSocketAddress endpoint) {
    CompletableFuture<ProxyResponse> result = new CompletableFuture<>();
    pool.acquire(endpoint, r.protocol, r.loop).whenComplete((stream, err) -> {
      if (err != null) {
        result.completeExceptionally(new ProxyException.UpstreamFailure("connect " + endpoint, Failures.unwrap(err)));
        return;
      }
      send(r, stream, result);
    });
    return result;
  }

  private void send(ProxyRequest r, HttpStream stream, CompletableFuture<ProxyResponse> result) {
    ResponseBody response = new ResponseBody(stream, r.body);
    Runnable abort = response::discard;
    Channel ch = stream.channel();
    LoopExecutor.run(ch.eventLoop(), () -> {
      stream.attach(response);
      HttpRequest head = r.head;
      if (r.body.hasBody()) {
        HttpRequest copy = new DefaultHttpRequest(head.protocolVersion(), head.method(), head.uri(), head.headers().copy());
        HttpFraming.prepare(copy, stream.protocol(), true);
        ch.write(copy);
        r.body.attach(ch);
      } else {
        ch.writeAndFlush(
            new DefaultFullHttpRequest(
                head.protocolVersion(), head.method(), head.uri(), Unpooled.EMPTY_BUFFER,
                head.headers().copy(), io.netty.handler.codec.http.EmptyHttpHeaders.INSTANCE));
      }
      // Added after the writes are queued so a cancel that races them still finds the stream.
      r.onCancel(abort);
    });
    response.head().whenComplete((resp, err) -> {
      if (err != null) {
        r.body.detach(ch);
        result.completeExceptionally(Failures.unwrap(err));
      } else {
        result.complete(resp);
      }
    });
    response.done().whenComplete((v, err) -> {
      r.removeOnCancel(abort);
      r.body.detach(ch);
    });
  }
}
