package dev.portage.proxy.mesh;

import dev.portage.core.balance.Pick;
import dev.portage.core.time.Ticker;
import java.net.InetSocketAddress;

/**
 * One request's attempt at one picked endpoint, from dispatch to the end of the response, and how it
 * is classified (Linkerd's rules): the latency (dispatch to response head) ends the pick, with
 * peak-EWMA's failure penalty for a 429, a 5xx or a penalised gRPC status in a trailers-only
 * response; the result, for failure accrual and {@code response_total}, is known at the response's
 * end: a failure for a 5xx, an upstream error, or a gRPC failure status in the trailers (or head); a
 * response dropped by this side before its end tells nothing unless its head already said failure.
 * A connect that failed marks the endpoint unreachable and sends the request around again. The
 * request's {@link Reply} hears the head or the failure from here.
 */
final class EndpointAttempt implements EndpointDispatch.Exchange {

  private final ProxyRequest r;
  private final Destination destination;
  private final Pick<InetSocketAddress> pick;
  private final SidecarMetrics.EndpointMetrics metrics;
  private final Ticker ticker;
  private final Service requeue;
  private final long startNanos;
  private final boolean grpc;
  private final Reply reply;

  EndpointAttempt(
      ProxyRequest r, Destination destination, Pick<InetSocketAddress> pick,
      SidecarMetrics.EndpointMetrics metrics, Ticker ticker, Service requeue, Reply reply) {
    this.r = r;
    this.destination = destination;
    this.pick = pick;
    this.metrics = metrics;
    this.ticker = ticker;
    this.requeue = requeue;
    this.startNanos = ticker.nanoTime();
    this.grpc = r.isGrpc();
    this.reply = reply;
  }

  @Override
  public void head(ProxyResponse response) {
    long now = ticker.nanoTime();
    long rtt = Math.max(0, now - startNanos);
    int status = response.head().status().code();
    boolean penalize = status == 429 || status >= 500;
    if (grpc && !penalize) {
      int code = GrpcStatus.of(response.head().headers()); // trailers-only
      penalize = code != GrpcStatus.NONE && GrpcStatus.isPenalized(code);
    }
    // The result follows at the end of the response (a 429 is penalised but not a failure).
    pick.responded(rtt, penalize);
    metrics.head(status, rtt);
    r.responseHeadNanos = now; // the route latency ends here too: no second reading up there
    reply.done(r, response, null);
  }

  @Override
  public void failed(Throwable cause) {
    if (r.isCancelled()) {
      pick.cancel();
      reply.done(r, null, cause);
      return;
    }
    pick.fail();
    boolean connect = cause instanceof ProxyException.ConnectFailure;
    metrics.noResponse(connect);
    if (!connect) {
      reply.done(r, null, cause);
      return;
    }
    destination.connectFailed(pick.endpoint(), cause.getCause());
    requeue.call(r, reply); // the request was never sent: it is the same request's turn again
  }

  @Override
  public void ended(ResponseBody body) {
    int status = body.status();
    int grpcStatus = grpc ? body.grpcStatus() : GrpcStatus.NONE;
    boolean error = body.upstreamError() != null;
    boolean failure = error || status >= 500 || (grpcStatus != GrpcStatus.NONE && GrpcStatus.isFailure(grpcStatus));
    if (failure) {
      pick.result(false);
    } else if (body.wasDiscarded() && grpc) {
      pick.cancel(); // the gRPC status never arrived: nothing is known
    } else {
      pick.result(true);
    }
    metrics.response(status, failure, grpcStatus, error);
  }
}
