package dev.portage.proxy.mesh;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.portage.core.time.FakeClock;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class RetryBudgetTest {

  final FakeClock clock = new FakeClock();

  @Test
  void ratioAllowsOneRetryPerFiveRequests() {
    RetryBudget b = new RetryBudget(clock, 0.2, 0, Duration.ofSeconds(10));
    for (int i = 0; i < 4; i++) {
      b.deposit();
      assertThat(b.tryWithdraw()).isFalse();
    }
    b.deposit();
    assertThat(b.tryWithdraw()).isTrue();
    assertThat(b.tryWithdraw()).isFalse();
  }

  @Test
  void minRetriesPerSecondAreAlwaysAllowedOverTheTtl() {
    RetryBudget b = new RetryBudget(clock, 0.2, 2, Duration.ofSeconds(1));
    assertThat(b.tryWithdraw()).isTrue();
    assertThat(b.tryWithdraw()).isTrue();
    assertThat(b.tryWithdraw()).isFalse();
    // Withdrawals expire with the ttl window: the reserve is there again.
    clock.advance(Duration.ofSeconds(1));
    assertThat(b.tryWithdraw()).isTrue();
  }

  @Test
  void depositsExpireAfterTheTtl() {
    RetryBudget b = new RetryBudget(clock, 1.0, 0, Duration.ofSeconds(10));
    b.deposit();
    clock.advance(Duration.ofSeconds(10));
    assertThat(b.tryWithdraw()).isFalse();
    b.deposit();
    clock.advance(Duration.ofSeconds(9));
    assertThat(b.tryWithdraw()).isTrue();
  }

  @Test
  void availableRetriesFollowsDepositsWithdrawalsAndExpiry() {
    RetryBudget b = new RetryBudget(clock, 0.5, 1, Duration.ofSeconds(2));
    assertThat(b.availableRetries()).isEqualTo(2); // reserve: 1/s over a 2 s ttl
    for (int i = 0; i < 4; i++) {
      b.deposit();
    }
    assertThat(b.availableRetries()).isEqualTo(4);
    assertThat(b.tryWithdraw()).isTrue();
    assertThat(b.availableRetries()).isEqualTo(3);
    clock.advance(Duration.ofSeconds(2));
    assertThat(b.availableRetries()).isEqualTo(2);
  }

  @Test
  void invalidSettingsAreRefused() {
    assertThat(RetryBudget.valid(0.2, Duration.ofMillis(500))).isFalse();
    assertThat(RetryBudget.valid(0.2, Duration.ofSeconds(61))).isFalse();
    assertThat(RetryBudget.valid(1001, Duration.ofSeconds(10))).isFalse();
    assertThat(RetryBudget.valid(-0.1, Duration.ofSeconds(10))).isFalse();
    assertThatThrownBy(() -> new RetryBudget(clock, 0.2, 1, Duration.ofMillis(10)))
        .hasMessage("retry budget: ratio 0.2, ttl PT0.01S (expected: ratio 0..1000, ttl 1s..60s)");
  }
}
