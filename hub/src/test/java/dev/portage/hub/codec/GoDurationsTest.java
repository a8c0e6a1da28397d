package dev.portage.hub.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** Go's time.Duration text, the JSON form of meta/v1.Duration. */
class GoDurationsTest {

  @Test
  void formatsLikeGo() {
    assertThat(GoDurations.format(0)).isEqualTo("0s");
    assertThat(GoDurations.format(1)).isEqualTo("1ns");
    assertThat(GoDurations.format(1_500)).isEqualTo("1.5µs");
    assertThat(GoDurations.format(1_500_000)).isEqualTo("1.5ms");
    assertThat(GoDurations.format(1_000_000_000)).isEqualTo("1s");
    assertThat(GoDurations.format(90_500_000_000L)).isEqualTo("1m30.5s");
    assertThat(GoDurations.format(3_600_000_000_000L)).isEqualTo("1h0m0s");
    assertThat(GoDurations.format(-120_000_000_000L)).isEqualTo("-2m0s");
    assertThat(GoDurations.format(Long.MIN_VALUE)).isEqualTo("-2562047h47m16.854775808s");
  }

  @Test
  void parsesLikeGo() {
    assertThat(GoDurations.parse("1h2m3.5s")).isEqualTo(3_723_500_000_000L);
    assertThat(GoDurations.parse("300ms")).isEqualTo(300_000_000L);
    assertThat(GoDurations.parse("1.5h")).isEqualTo(5_400_000_000_000L);
    assertThat(GoDurations.parse("-1m")).isEqualTo(-60_000_000_000L);
    assertThat(GoDurations.parse("0")).isZero();
    assertThat(GoDurations.parse("2us")).isEqualTo(2_000);
    for (long n : new long[] {1, 1_500, 90_500_000_000L, 3_600_000_000_000L, -7}) {
      assertThat(GoDurations.parse(GoDurations.format(n))).isEqualTo(n);
    }
    assertThatThrownBy(() -> GoDurations.parse("")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> GoDurations.parse("5")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> GoDurations.parse("5d")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> GoDurations.parse("h")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> GoDurations.parse("9999999999h"))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
