package dev.portage.core.time;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class FakeClockTest {

  private final FakeClock clock = new FakeClock();

  @Test
  void timeMovesOnlyWhenAdvanced() {
    long t0 = clock.nanoTime();
    assertThat(clock.nanoTime()).isEqualTo(t0);
    clock.advance(Duration.ofMillis(1500));
    assertThat(clock.nanoTime() - t0).isEqualTo(1_500_000_000L);
    assertThat(clock.instant()).isEqualTo(java.time.Instant.parse("2026-01-01T00:00:01.500Z"));
  }

  @Test
  void scheduleNeverRunsTaskInline() {
    List<String> ran = new ArrayList<>();
    clock.scheduler().execute(() -> ran.add("now"));
    clock.scheduler().schedule(() -> ran.add("later"), 1, TimeUnit.SECONDS);
    assertThat(ran).isEmpty();
    assertThat(clock.runDue()).isEqualTo(1);
    assertThat(ran).containsExactly("now");
    clock.advance(Duration.ofMillis(999));
    assertThat(ran).containsExactly("now");
    clock.advance(Duration.ofMillis(1));
    assertThat(ran).containsExactly("now", "later");
  }

  @Test
  void tasksRunInDeadlineOrderAndSeeTheirOwnDeadline() {
    List<Long> seen = new ArrayList<>();
    clock.scheduler().schedule(() -> seen.add(clock.nanoTime()), 3, TimeUnit.SECONDS);
    clock.scheduler().schedule(() -> seen.add(clock.nanoTime()), 1, TimeUnit.SECONDS);
    clock.advance(Duration.ofSeconds(5));
    assertThat(seen).containsExactly(1_000_000_000L, 3_000_000_000L);
    assertThat(clock.nanoTime()).isEqualTo(5_000_000_000L);
  }

  @Test
  void tasksScheduledByTasksRunWithinTheSameAdvance() {
    List<String> ran = new ArrayList<>();
    clock.scheduler().schedule(
        () -> clock.scheduler().schedule(() -> ran.add("second"), 1, TimeUnit.SECONDS),
        1, TimeUnit.SECONDS);
    clock.advance(Duration.ofSeconds(2));
    assertThat(ran).containsExactly("second");
  }

  @Test
  void cancelledTaskNeverRuns() {
    List<String> ran = new ArrayList<>();
    ScheduledFuture<?> f = clock.scheduler().schedule(() -> ran.add("x"), 1, TimeUnit.SECONDS);
    assertThat(clock.pendingTasks()).isEqualTo(1);
    f.cancel(false);
    assertThat(clock.pendingTasks()).isZero();
    clock.advance(Duration.ofSeconds(2));
    assertThat(ran).isEmpty();
  }

  @Test
  void fixedRateRepeats() {
    List<Long> seen = new ArrayList<>();
    ScheduledFuture<?> f =
        clock.scheduler().scheduleAtFixedRate(() -> seen.add(clock.nanoTime() / 1_000_000), 10, 10,
            TimeUnit.MILLISECONDS);
    clock.advance(Duration.ofMillis(35));
    assertThat(seen).containsExactly(10L, 20L, 30L);
    f.cancel(false);
    clock.advance(Duration.ofMillis(100));
    assertThat(seen).hasSize(3);
    assertThat(clock.nextDeadline()).isNull();
  }
}
