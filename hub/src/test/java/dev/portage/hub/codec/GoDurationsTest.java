package dev.portage.hub.codec;

import static org.assertj.core.api.Assertions.assertThat;

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
  void whatIsFormattedParsesBackWithCoresParser() {
    for (long n : new long[] {0, 1, 1_500, 90_500_000_000L, 3_600_000_000_000L, -7, Long.MAX_VALUE}) {
      assertThat(dev.portage.core.time.GoDurations.parse(GoDurations.format(n)).toNanos())
          .isEqualTo(n);
    }
  }
}
