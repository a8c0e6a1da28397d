package dev.portage.control.destination;

import dev.portage.api.linkerd.destination.Update;
import io.grpc.stub.ServerCallStreamObserver;
import java.util.ArrayDeque;
import java.util.List;

/**
 * One {@code Get} stream: remembers the last snapshot it turned into updates and queues the diffs,
 * at most {@code queueLimit} unsent (Linkerd's bound of 100). Confined to the destination server's
 * serial executor.
 */
final class EndpointStream extends DestinationStream<Update> {

  private final ArrayDeque<Update> queue = new ArrayDeque<>();
  private final int queueLimit;
  private EndpointSnapshot last;

  EndpointStream(
      long id,
      Authority authority,
      ContextToken context,
      ServerCallStreamObserver<Update> call,
      int queueLimit,
      DestinationMetrics metrics,
      long openedAtNanos) {
    super(id, DestinationMetrics.GET, authority, context, call, metrics, openedAtNanos);
    this.queueLimit = queueLimit;
  }

  /**
   * Queues what takes the client from the last snapshot to {@code next}.
   *
   * @return false if the queue would exceed its bound (nothing was queued; the caller aborts)
   */
  boolean publish(EndpointSnapshot next) {
    List<Update> updates = next.updatesSince(last);
    if (queue.size() + updates.size() > queueLimit) {
      return false;
    }
    queue.addAll(updates);
    last = next;
    return true;
  }

  int queued() {
    return queue.size();
  }

  @Override
  Update poll() {
    return queue.pollFirst();
  }
}
