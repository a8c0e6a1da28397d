package dev.portage.core.time;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class TimeSourceTest {

  @Test
  void newTimerDropsCancelledTasksFromItsQueue() {
    ScheduledExecutorService timer = TimeSource.newTimer("test-timer");
    try {
      ScheduledFuture<?>[] timeouts = new ScheduledFuture<?>[1_000];
      for (int i = 0; i < timeouts.length; i++) {
        timeouts[i] = timer.schedule(() -> {}, 1, TimeUnit.HOURS);
      }
      assertThat(((ScheduledThreadPoolExecutor) timer).getQueue()).hasSize(1_000);
      for (ScheduledFuture<?> t : timeouts) {
        t.cancel(false);
      }
      assertThat(((ScheduledThreadPoolExecutor) timer).getQueue()).isEmpty();
    } finally {
      timer.shutdownNow();
    }
  }

  @Test
  void newTimerRunsTasksOnOneNamedDaemonThread() throws Exception {
    ScheduledExecutorService timer = TimeSource.newTimer("portage-test-timer");
    try {
      AtomicReference<Thread> ran = new AtomicReference<>();
      timer.schedule(() -> ran.set(Thread.currentThread()), 0, TimeUnit.MILLISECONDS)
          .get(Duration.ofSeconds(10).toMillis(), TimeUnit.MILLISECONDS);
      assertThat(ran.get().getName()).isEqualTo("portage-test-timer");
      assertThat(ran.get().isDaemon()).isTrue();
    } finally {
      timer.shutdownNow();
    }
  }

  @Test
  void newTimerNeedsAName() {
    assertThatThrownBy(() -> TimeSource.newTimer(" "))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("threadName");
  }
}
