package dev.portage.core.http;

import io.netty.util.concurrent.EventExecutor;
import java.util.Objects;
import java.util.concurrent.Executor;

/**
 * Runs a task at once when called on its event loop and queues it there otherwise. For
 * continuations of a proxied exchange whose sides share one loop: queueing a task on the loop the
 * caller is already on only delays it behind unrelated work. Thread-safe; tasks run on the loop.
 */
public final class LoopExecutor implements Executor {

  private final EventExecutor loop;

  private LoopExecutor(EventExecutor loop) {
    this.loop = loop;
  }

  /** An executor of {@code loop} that runs inline when already on it. */
  public static LoopExecutor of(EventExecutor loop) {
    return new LoopExecutor(Objects.requireNonNull(loop, "loop"));
  }

  /** Runs {@code task} now if the caller is on {@code loop}, else queues it there. */
  public static void run(EventExecutor loop, Runnable task) {
    if (loop.inEventLoop()) {
      task.run();
    } else {
      loop.execute(task);
    }
  }

  @Override
  public void execute(Runnable task) {
    run(loop, task);
  }
}
