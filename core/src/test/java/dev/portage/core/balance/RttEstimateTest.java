package dev.portage.core.balance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class RttEstimateTest {

  private static final double MS = 1_000_000;
  private static final double DECAY = 10_000 * MS;
  private static final double FLOOR = MS;

  @Test
  void peakIsTakenAtOnce() {
    RttEstimate e = new RttEstimate(30 * MS, 0).observe(500 * MS, 1, DECAY, FLOOR);
    assertThat(e.estimateNanos()).isEqualTo(500 * MS);
    assertThat(e.updatedAtNanos()).isEqualTo(1);
  }

  @Test
  void lowerRttIsBlendedByElapsedTime() {
    long tenSeconds = (long) DECAY;
    RttEstimate e = new RttEstimate(100 * MS, 0).observe(10 * MS, tenSeconds, DECAY, FLOOR);
    double w = Math.exp(-1);
    assertThat(e.estimateNanos()).isCloseTo(100 * MS * w + 10 * MS * (1 - w), within(1.0));
  }

  @Test
  void lowerRttRightAfterTheLastUpdateBarelyMovesTheEstimate() {
    RttEstimate e = new RttEstimate(100 * MS, 0).observe(10 * MS, (long) MS, DECAY, FLOOR);
    assertThat(e.estimateNanos()).isGreaterThan(99.9 * MS);
  }

  @Test
  void decaysTowardZeroWhenRead() {
    RttEstimate e = new RttEstimate(300 * MS, 1_000);
    assertThat(e.decayedAt(1_000, DECAY)).isEqualTo(300 * MS);
    assertThat(e.decayedAt(1_000 + (long) (2 * DECAY), DECAY)).isCloseTo(300 * MS * Math.exp(-2), within(1.0));
    // A reading before the last update (ticker race between threads) does not inflate it.
    assertThat(e.decayedAt(0, DECAY)).isEqualTo(300 * MS);
  }

  @Test
  void estimateIsFloored() {
    RttEstimate e = new RttEstimate(2 * MS, 0).observe(0, (long) (100 * DECAY), DECAY, FLOOR);
    assertThat(e.estimateNanos()).isEqualTo(FLOOR);
  }

  @Test
  void observationAfterLongIdleStartsFromTheDecayedEstimateSeenAtThePick() {
    long pickedAt = (long) (3 * DECAY);
    RttEstimate e =
        new RttEstimate(300 * MS, 0).asReadAt(pickedAt, DECAY).observe(30 * MS, pickedAt + (long) (30 * MS), DECAY, FLOOR);
    // 300·e^-3 ≈ 14.9 ms was what the pick saw, so 30 ms is a peak and taken as is.
    assertThat(e.estimateNanos()).isEqualTo(30 * MS);
  }

  @Test
  void readingBeforeTheLastUpdateChangesNothing() {
    RttEstimate e = new RttEstimate(50 * MS, 1_000);
    assertThat(e.asReadAt(500, DECAY)).isSameAs(e);
  }
}
