package dev.portage.control.destination;

import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;

/**
 * One server stream of the Destination API: sends its pending messages only while gRPC says the
 * call {@link ServerCallStreamObserver#isReady() is ready}, so a slow client never makes the server
 * buffer without bound. Confined to the destination server's serial executor.
 */
abstract class DestinationStream<T> {

  final long id;
  final String rpc;
  final Authority authority;
  final ContextToken context;
  private final ServerCallStreamObserver<T> call;
  private final DestinationMetrics metrics;
  private final long openedAtNanos;
  private boolean closed;

  DestinationStream(
      long id,
      String rpc,
      Authority authority,
      ContextToken context,
      ServerCallStreamObserver<T> call,
      DestinationMetrics metrics,
      long openedAtNanos) {
    this.id = id;
    this.rpc = rpc;
    this.authority = authority;
    this.context = context;
    this.call = call;
    this.metrics = metrics;
    this.openedAtNanos = openedAtNanos;
  }

  /** The next message to send, removed from the pending ones, or null. */
  abstract T poll();

  /** Sends pending messages while the call is ready. */
  final void drain() {
    while (!closed && call.isReady()) {
      T next = poll();
      if (next == null) {
        return;
      }
      call.onNext(next);
      metrics.updateSent(rpc);
    }
  }

  /** Ends the call with an error status; later drains send nothing. */
  final void abort(Status status) {
    if (!closed) {
      closed = true;
      call.onError(status.asRuntimeException());
    }
  }

  /** The client went away: send nothing more. */
  final void markClosed() {
    closed = true;
  }

  final boolean isClosed() {
    return closed || call.isCancelled();
  }

  final long openedAtNanos() {
    return openedAtNanos;
  }

  @Override
  public String toString() {
    return rpc + "#" + id + " " + authority;
  }
}
