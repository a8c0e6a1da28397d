package dev.portage.tunnel.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.junit.jupiter.api.Test;

class SerialExecutorTest {

  /** Runs what it is given later, on {@link #runAll}; refuses everything once stopped. */
  private static final class ManualExecutor implements Executor {
    final List<Runnable> queued = new ArrayList<>();
    boolean stopped;

    @Override
    public void execute(Runnable r) {
      if (stopped) {
        throw new RejectedExecutionException("stopped");
      }
      queued.add(r);
    }

    void runAll() {
      while (!queued.isEmpty()) {
        queued.remove(0).run();
      }
    }
  }

  private static final class Holder implements SerialExecutor.Abandonable {
    final List<String> log;
    final String name;

    Holder(List<String> log, String name) {
      this.log = log;
      this.name = name;
    }

    @Override
    public void run() {
      log.add("ran " + name);
    }

    @Override
    public void abandon() {
      log.add("abandoned " + name);
    }
  }

  @Test
  void runsTasksInOrderOnTheDelegate() {
    ManualExecutor delegate = new ManualExecutor();
    SerialExecutor serial = new SerialExecutor(delegate);
    List<String> log = new ArrayList<>();
    serial.execute(new Holder(log, "a"));
    serial.execute(() -> log.add("ran b"));
    serial.execute(new Holder(log, "c"));
    assertThat(log).isEmpty();
    assertThat(delegate.queued).hasSize(1); // one drain for the three

    delegate.runAll();

    assertThat(log).containsExactly("ran a", "ran b", "ran c");
  }

  @Test
  void aStoppedDelegateAbandonsQueuedAndLaterTasksInsteadOfThrowing() {
    ManualExecutor delegate = new ManualExecutor();
    SerialExecutor serial = new SerialExecutor(delegate);
    List<String> log = new ArrayList<>();
    serial.execute(new Holder(log, "a"));
    delegate.runAll();
    delegate.stopped = true;

    serial.execute(new Holder(log, "b"));
    serial.execute(() -> log.add("ran c"));
    serial.execute(new Holder(log, "d"));

    assertThat(log).containsExactly("ran a", "abandoned b", "abandoned d");
  }
}
