package dev.portage.core.backoff;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.random.RandomGenerator;
import org.junit.jupiter.api.Test;

class BackoffPolicyTest {

  /** A generator whose nextDouble() is always the same value. */
  private static RandomGenerator fixed(double value) {
    return new RandomGenerator() {
      @Override
      public long nextLong() {
        throw new UnsupportedOperationException("only nextDouble is used");
      }

      @Override
      public double nextDouble() {
        return value;
      }
    };
  }

  private static List<Duration> delays(Backoff backoff, int n) {
    List<Duration> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(backoff.nextDelay());
    }
    return out;
  }

  @Test
  void withoutJitterGrowsByTheFactorUpToTheCap() {
    Backoff backoff = BackoffPolicy.LINKERD.newBackoff(fixed(0));
    assertThat(delays(backoff, 12))
        .containsExactly(
            Duration.ofMillis(100), Duration.ofMillis(200), Duration.ofMillis(400),
            Duration.ofMillis(800), Duration.ofMillis(1600), Duration.ofMillis(3200),
            Duration.ofMillis(6400), Duration.ofMillis(12800), Duration.ofMillis(25600),
            Duration.ofMillis(51200), Duration.ofSeconds(60), Duration.ofSeconds(60));
    assertThat(backoff.attempts()).isEqualTo(12);
  }

  @Test
  void jitterAddsAtMostItsShareOfTheBase() {
    Backoff backoff = BackoffPolicy.GRPC.newBackoff(fixed(0.5));
    // base 1 s, 1.6 s, 2.56 s; + 0.5 × 0.2 × base
    assertThat(delays(backoff, 3))
        .containsExactly(Duration.ofMillis(1100), Duration.ofMillis(1760), Duration.ofMillis(2816));
  }

  @Test
  void jitterNeverPassesTheCap() {
    Backoff backoff = BackoffPolicy.KONNECTIVITY_SYNC.newBackoff(fixed(0.999_999));
    List<Duration> all = delays(backoff, 30);
    assertThat(all).allSatisfy(d -> assertThat(d).isLessThanOrEqualTo(Duration.ofSeconds(10)));
    // 1 s × 1.5^5 = 7.59 s; with ~10 % jitter 8.35 s; the next base 11.4 s is capped.
    assertThat(all.get(5)).isBetween(Duration.ofMillis(8_350), Duration.ofMillis(8_360));
    assertThat(all.get(6)).isEqualTo(Duration.ofSeconds(10));
  }

  @Test
  void seededRandomStaysWithinTheJitterBand() {
    Backoff backoff = BackoffPolicy.GRPC.newBackoff(new Random(99));
    double base = 1_000;
    for (int i = 0; i < 20; i++) {
      long ms = backoff.nextDelay().toMillis();
      double capped = Math.min(base, 120_000);
      assertThat(ms).isBetween((long) capped, (long) Math.min(120_000, capped * 1.2));
      base *= 1.6;
    }
  }

  @Test
  void resetStartsOverFromTheMinimum() {
    Backoff backoff = BackoffPolicy.KONNECTIVITY_SYNC.newBackoff(fixed(0));
    delays(backoff, 5);
    backoff.reset();
    assertThat(backoff.attempts()).isZero();
    assertThat(backoff.nextDelay()).isEqualTo(Duration.ofSeconds(1));
    assertThat(backoff.nextDelayNanos()).isEqualTo(1_500_000_000L);
    assertThat(backoff.attempts()).isEqualTo(2);
  }

  @Test
  void factorOneIsAConstantDelay() {
    Backoff backoff =
        new BackoffPolicy(Duration.ofMillis(50), Duration.ofMillis(50), 1.0, 0).newBackoff(fixed(0.3));
    assertThat(delays(backoff, 3)).containsOnly(Duration.ofMillis(50));
  }

  @Test
  void presetsMatchUpstream() {
    assertThat(BackoffPolicy.LINKERD)
        .isEqualTo(new BackoffPolicy(Duration.ofMillis(100), Duration.ofSeconds(60), 2, 0.1));
    assertThat(BackoffPolicy.KONNECTIVITY_SYNC)
        .isEqualTo(new BackoffPolicy(Duration.ofSeconds(1), Duration.ofSeconds(10), 1.5, 0.1));
    assertThat(BackoffPolicy.GRPC)
        .isEqualTo(new BackoffPolicy(Duration.ofSeconds(1), Duration.ofSeconds(120), 1.6, 0.2));
  }

  @Test
  void rejectsBadSettings() {
    Duration s = Duration.ofSeconds(1);
    assertThatThrownBy(() -> new BackoffPolicy(Duration.ZERO, s, 2, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("min: PT0S (expected: > 0)");
    assertThatThrownBy(() -> new BackoffPolicy(s, Duration.ofMillis(10), 2, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("max: PT0.01S (expected: >= min PT1S)");
    assertThatThrownBy(() -> new BackoffPolicy(s, s, 0.5, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("factor: 0.5 (expected: >= 1 and finite)");
    assertThatThrownBy(() -> new BackoffPolicy(s, s, Double.NaN, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("factor: NaN (expected: >= 1 and finite)");
    assertThatThrownBy(() -> new BackoffPolicy(s, s, 2, 1.5))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("jitter: 1.5 (expected: 0..1)");
    assertThatThrownBy(() -> new BackoffPolicy(null, s, 2, 0))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("min");
    assertThatThrownBy(() -> BackoffPolicy.GRPC.newBackoff(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("random");
  }
}
