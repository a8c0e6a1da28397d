package dev.portage.tunnel.server;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs tasks one at a time, in submission order, on a shared delegate executor: the single owner of a
 * gRPC frontend's state. Tasks submitted from any thread; a task that throws is logged and does not
 * stop the ones after it. Its queue holds control events and DATA already counted against the
 * connection's {@link ReceiveBudget}, which bounds it. Once the delegate refuses work (its event loop
 * stopped with the server), queued and later tasks never run: each {@link Abandonable} one is told so,
 * so that what it holds (a payload buffer) is freed, and the rest are dropped.
 */
final class SerialExecutor implements Executor {
  private static final Logger log = LoggerFactory.getLogger(SerialExecutor.class);

  /** A task holding something to free if it never runs. */
  interface Abandonable extends Runnable {
    /** Called instead of {@link #run()} when the executor has stopped; frees what the task holds. */
    void abandon();
  }

  private final Executor delegate;
  private final Queue<Runnable> tasks = new ConcurrentLinkedQueue<>();
  private final AtomicBoolean scheduled = new AtomicBoolean();

  SerialExecutor(Executor delegate) {
    this.delegate = delegate;
  }

  /** Queues {@code task}; never throws, a task that cannot run any more is abandoned (see above). */
  @Override
  public void execute(Runnable task) {
    tasks.add(task);
    schedule();
  }

  private void schedule() {
    if (scheduled.compareAndSet(false, true)) {
      try {
        delegate.execute(this::drain);
      } catch (RejectedExecutionException stopped) {
        // No drain is pending or running (the flag was ours), so no task can run any more.
        scheduled.set(false);
        abandonQueued();
      }
    }
  }

  private void abandonQueued() {
    int n = 0;
    for (Runnable task; (task = tasks.poll()) != null; n++) {
      if (task instanceof Abandonable a) {
        try {
          a.abandon();
        } catch (RuntimeException e) {
          log.warn("abandoning a frontend task failed", e);
        }
      }
    }
    if (n > 0) {
      log.debug("executor stopped: {} frontend task(s) dropped", n);
    }
  }

  private void drain() {
    try {
      Runnable task;
      while ((task = tasks.poll()) != null) {
        try {
          task.run();
        } catch (RuntimeException e) {
          log.warn("frontend task failed", e);
        }
      }
    } finally {
      scheduled.set(false);
      if (!tasks.isEmpty()) {
        schedule();
      }
    }
  }
}
