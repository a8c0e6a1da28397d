package dev.portage.tunnel.server;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs tasks one at a time, in submission order, on a shared delegate executor: the single owner of a
 * gRPC frontend's state. Tasks submitted from any thread; a task that throws is logged and does not
 * stop the ones after it. Its queue holds control events and DATA already counted against the
 * connection's {@link ReceiveBudget}, which bounds it.
 */
final class SerialExecutor implements Executor {
  private static final Logger log = LoggerFactory.getLogger(SerialExecutor.class);

  private final Executor delegate;
  private final Queue<Runnable> tasks = new ConcurrentLinkedQueue<>();
  private final AtomicBoolean scheduled = new AtomicBoolean();

  SerialExecutor(Executor delegate) {
    this.delegate = delegate;
  }

  @Override
  public void execute(Runnable task) {
    tasks.add(task);
    schedule();
  }

  private void schedule() {
    if (scheduled.compareAndSet(false, true)) {
      delegate.execute(this::drain);
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
