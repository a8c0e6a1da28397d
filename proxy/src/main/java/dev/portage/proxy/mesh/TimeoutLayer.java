package dev.portage.proxy.mesh;

import dev.portage.core.time.TimeSource;
import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Timeout layer: the route's timeout, counted from the request's start, bounds the wait for the
 * response head across every attempt. On expiry the client gets 504 and the request is cancelled,
 * which aborts the attempt in flight and stops retries. The timer runs on the request's event loop
 * in real time ({@link TimeSource#scheduleOn}), on the injected scheduler under a fake clock; a
 * route without a timeout costs nothing here.
 */
final class TimeoutLayer implements Service {

  private final TimeSource time;
  private final Service inner;

  TimeoutLayer(TimeSource time, Service inner) {
    this.time = time;
    this.inner = inner;
  }

  @Override
  public void call(ProxyRequest r, Reply reply) {
    Duration timeout = r.route.timeout();
    if (timeout.isZero()) {
      inner.call(r, reply);
      return;
    }
    long remaining = Math.max(0, r.startNanos + timeout.toNanos() - time.ticker().nanoTime());
    Deadline deadline = new Deadline(r, timeout, reply);
    deadline.timer = time.scheduleOn(r.loop, deadline, remaining);
    inner.call(r, deadline);
  }

  /**
   * One request's race between its answer and its timer: whichever comes first is passed on, the
   * other is dropped (a late response's body discarded).
   */
  private static final class Deadline extends AtomicBoolean implements Reply, Runnable {
    private final ProxyRequest r;
    private final Duration timeout;
    private final Reply reply;
    volatile ScheduledFuture<?> timer; // set right after scheduling; null only if it already ran

    Deadline(ProxyRequest r, Duration timeout, Reply reply) {
      this.r = r;
      this.timeout = timeout;
      this.reply = reply;
    }

    /** The timer. */
    @Override
    public void run() {
      if (compareAndSet(false, true)) {
        reply.done(r, null, new ProxyException(504, "request timed out after " + timeout.toMillis() + " ms"));
        r.cancel();
      }
    }

    @Override
    public void done(ProxyRequest request, ProxyResponse response, Throwable failure) {
      ScheduledFuture<?> t = timer;
      if (t != null) {
        t.cancel(false);
      }
      if (compareAndSet(false, true)) {
        reply.done(request, response, failure);
      } else if (response != null) {
        response.body().discard();
      }
    }
  }
}
