package dev.portage.core.time;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.channel.DefaultEventLoop;
import io.netty.channel.EventLoop;
import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
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

  @Test
  void scheduleOnRunsOnTheGivenLoopInRealTime() throws Exception {
    ScheduledExecutorService timer = TimeSource.newTimer("portage-test-timer");
    EventLoop loop = new DefaultEventLoop();
    try {
      AtomicReference<Boolean> onLoop = new AtomicReference<>();
      TimeSource.system(timer).scheduleOn(loop, () -> onLoop.set(loop.inEventLoop()), 0)
          .get(10, TimeUnit.SECONDS);
      assertThat(onLoop.get()).isTrue();
      // Cancelled, it never runs; the shared scheduler was not used at all.
      AtomicInteger ran = new AtomicInteger();
      ScheduledFuture<?> cancelled =
          TimeSource.system(timer).scheduleOn(loop, ran::incrementAndGet, TimeUnit.HOURS.toNanos(1));
      assertThat(cancelled.cancel(false)).isTrue();
      loop.submit(() -> {}).get(10, TimeUnit.SECONDS);
      assertThat(ran.get()).isZero();
      assertThat(((ScheduledThreadPoolExecutor) timer).getCompletedTaskCount()).isZero();
      assertThat(((ScheduledThreadPoolExecutor) timer).getQueue()).isEmpty();
    } finally {
      loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
      timer.shutdownNow();
    }
  }

  @Test
  void scheduleOnStaysOnTheSchedulerUnderAFakeClockWithoutALoopOrAfterTheLoopStops() throws Exception {
    FakeClock clock = new FakeClock();
    EventLoop loop = new DefaultEventLoop();
    ScheduledExecutorService timer = TimeSource.newTimer("portage-test-timer");
    try {
      AtomicInteger ran = new AtomicInteger();
      clock.timeSource().scheduleOn(loop, ran::incrementAndGet, Duration.ofSeconds(1).toNanos());
      clock.timeSource().scheduleOn(null, ran::incrementAndGet, Duration.ofSeconds(1).toNanos());
      assertThat(clock.pendingTasks()).isEqualTo(2);
      clock.advance(Duration.ofMillis(999));
      assertThat(ran.get()).isZero();
      clock.advance(Duration.ofMillis(1));
      assertThat(ran.get()).isEqualTo(2);

      loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
      TimeSource.system(timer).scheduleOn(loop, ran::incrementAndGet, 0).get(10, TimeUnit.SECONDS);
      assertThat(ran.get()).isEqualTo(3); // on the scheduler: the stopped loop runs nothing
    } finally {
      loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
      timer.shutdownNow();
    }
  }
}
