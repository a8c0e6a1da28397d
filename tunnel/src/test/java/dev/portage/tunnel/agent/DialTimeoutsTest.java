package dev.portage.tunnel.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.portage.core.time.FakeClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.junit.jupiter.api.Test;

class DialTimeoutsTest {
  private static final Duration TIMEOUT = Duration.ofSeconds(5);

  private final FakeClock clock = new FakeClock();
  private final Set<String> finished = new HashSet<>();
  private final List<String> timedOut = new ArrayList<>();

  /** The clock's scheduler runs due tasks on the test thread, which then plays the event loop. */
  private DialTimeouts<String> timeouts(Executor loop) {
    return new DialTimeouts<>(clock.scheduler(), clock, TIMEOUT, loop, s -> !finished.contains(s), timedOut::add);
  }

  @Test
  void liveItemTimesOutExactlyAtItsDeadline() {
    DialTimeouts<String> t = timeouts(Runnable::run);
    t.add("a");
    clock.advance(TIMEOUT.minusNanos(1));
    assertThat(timedOut).isEmpty();
    clock.advance(Duration.ofNanos(1));
    assertThat(timedOut).containsExactly("a");
    assertThat(t.size()).isZero();
    assertThat(clock.pendingTasks()).as("nothing left to wait for: no timer").isZero();
  }

  @Test
  void manyPendingItemsShareOneTimerAndExpireInStartOrder() {
    DialTimeouts<String> t = timeouts(Runnable::run);
    for (int i = 0; i < 100; i++) {
      t.add("d" + i);
      clock.advance(Duration.ofMillis(10));
    }
    assertThat(clock.pendingTasks()).isEqualTo(1);
    clock.advance(TIMEOUT.minus(Duration.ofMillis(505))); // now 5.495 s: d0 (5.0 s) to d49 (5.49 s) are due
    assertThat(timedOut).hasSize(50).startsWith("d0", "d1").endsWith("d49");
    assertThat(clock.pendingTasks()).as("re-armed for d50").isEqualTo(1);
    assertThat(clock.nextDeadline()).isEqualTo(Duration.ofMillis(5));
    clock.advance(Duration.ofSeconds(1));
    assertThat(timedOut).hasSize(100).endsWith("d99");
    assertThat(clock.pendingTasks()).isZero();
  }

  @Test
  void finishedItemsNeverTimeOutAndSequentialItemsDoNotArmATimerEach() {
    DialTimeouts<String> t = timeouts(Runnable::run);
    for (int i = 0; i < 1000; i++) {
      String item = "d" + i;
      t.add(item);
      finished.add(item); // the dial completed
      t.trim();
      assertThat(t.size()).isZero();
      assertThat(clock.pendingTasks()).isEqualTo(1);
      clock.advance(Duration.ofMillis(1));
    }
    clock.advance(TIMEOUT);
    assertThat(timedOut).isEmpty();
    assertThat(clock.pendingTasks()).as("fired once, found nothing live, did not re-arm").isZero();
  }

  @Test
  void finishedHeadIsSkippedAndTheTimerReArmsForTheNextLiveItem() {
    DialTimeouts<String> t = timeouts(Runnable::run);
    t.add("a");
    clock.advance(Duration.ofSeconds(2));
    t.add("b");
    finished.add("a");
    clock.advance(Duration.ofSeconds(3)); // a's deadline: a finished, b has 2 s left
    assertThat(timedOut).isEmpty();
    assertThat(clock.nextDeadline()).isEqualTo(Duration.ofSeconds(2));
    clock.advance(Duration.ofSeconds(2));
    assertThat(timedOut).containsExactly("b");
  }

  @Test
  void timeoutRunsOnTheLoopNotOnTheSchedulerThread() {
    List<Runnable> loopTasks = new ArrayList<>();
    DialTimeouts<String> t = timeouts(loopTasks::add);
    t.add("a");
    clock.advance(TIMEOUT);
    assertThat(timedOut).as("the scheduler only hands over to the loop").isEmpty();
    assertThat(loopTasks).hasSize(1);
    loopTasks.get(0).run();
    assertThat(timedOut).containsExactly("a");
  }

  @Test
  void closeCancelsTheTimerAndForgetsEverything() {
    DialTimeouts<String> t = timeouts(Runnable::run);
    t.add("a");
    t.close();
    assertThat(clock.pendingTasks()).isZero();
    t.add("b"); // after close: ignored
    clock.advance(TIMEOUT.multipliedBy(2));
    assertThat(timedOut).isEmpty();
    assertThat(t.size()).isZero();
  }

  @Test
  void aLoopThatIsGoneDropsTheFiring() {
    DialTimeouts<String> t = timeouts(task -> {
      throw new RejectedExecutionException("event loop terminated");
    });
    t.add("a");
    clock.advance(TIMEOUT);
    assertThat(timedOut).isEmpty();
  }

  @Test
  void rejectsANonPositiveTimeout() {
    assertThatThrownBy(() -> new DialTimeouts<String>(
        clock.scheduler(), clock, Duration.ZERO, Runnable::run, s -> true, s -> {}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("timeout: PT0S (expected: > 0)");
  }
}
