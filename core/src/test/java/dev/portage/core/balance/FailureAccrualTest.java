package dev.portage.core.balance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.portage.core.time.FakeClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class FailureAccrualTest {

  private final FakeClock clock = new FakeClock();
  private final List<String> readied = new ArrayList<>();
  private final Balancer<String> balancer = Balancer.roundRobin();
  private final Endpoint<String> a = Endpoint.of("a", "a:80");
  private final Endpoint<String> b = Endpoint.of("b", "b:80");

  /** Linkerd's defaults without jitter, so backoffs are exact: 1 s, 2 s, 4 s ... 60 s. */
  private final FailureAccrual accrual = new FailureAccrual(
      new FailureAccrual.Settings(7, Duration.ofSeconds(1), Duration.ofMinutes(1), 0), clock.scheduler(),
      new Random(1), e -> readied.add(e.id()));

  FailureAccrualTest() {
    balancer.update(List.of(a, b));
    accrual.watch(a);
    accrual.watch(b);
  }

  private Pick<String> pickA() {
    return AbstractBalancerContractTest.pickOf(balancer, a);
  }

  private void failA(int times) {
    for (int i = 0; i < times; i++) {
      pickA().fail(1_000);
    }
  }

  @Test
  void sevenConsecutiveFailuresShutTheEndpoint() {
    failA(6);
    assertThat(a.isReady()).isTrue();
    failA(1);
    assertThat(a.isReady()).isFalse();
    assertThat(a.isShut()).isTrue();
    assertThat(a.isHealthy()).isTrue();
    assertThat(a.isReachable()).isTrue();
  }

  @Test
  void aSuccessResetsTheCount() {
    failA(6);
    pickA().complete(1_000);
    failA(6);
    assertThat(a.isReady()).isTrue();
    failA(1);
    assertThat(a.isShut()).isTrue();
  }

  @Test
  void shutForTheBackoffThenOneProbeWhoseSuccessReopens() {
    failA(7);
    clock.advance(Duration.ofMillis(999));
    assertThat(a.isReady()).isFalse();
    clock.advance(Duration.ofMillis(1));
    assertThat(a.isReady()).isTrue();
    assertThat(readied).containsExactly("a");

    Pick<String> probe = pickA();
    assertThat(probe.isProbe()).isTrue();
    assertThat(a.isReady()).as("the probe is the only request in probation").isFalse();
    probe.complete(1_000);
    assertThat(a.isReady()).isTrue();
    assertThat(readied).containsExactly("a", "a");

    // Open again with the count and the backoff reset: seven failures, shut for 1 s again.
    failA(7);
    assertThat(clock.nextDeadline()).isEqualTo(Duration.ofSeconds(1));
  }

  @Test
  void aFailedProbeShutsWithTheDoubledBackoffUpToTheCap() {
    failA(7);
    long[] expectedSeconds = {1, 2, 4, 8, 16, 32, 60, 60};
    for (long s : expectedSeconds) {
      assertThat(clock.nextDeadline()).isEqualTo(Duration.ofSeconds(s));
      clock.advance(Duration.ofSeconds(s));
      Pick<String> probe = pickA();
      assertThat(probe.isProbe()).isTrue();
      probe.fail(1_000);
      assertThat(a.isShut()).isTrue();
    }
  }

  @Test
  void lateResultsWhileShutAreIgnored() {
    List<Pick<String>> sentBefore = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      sentBefore.add(pickA());
    }
    failA(7);
    for (int i = 0; i < 3; i++) {
      sentBefore.get(i).complete(1_000); // successes sent before the shut do not reopen it
    }
    assertThat(a.isShut()).isTrue();
    clock.advance(Duration.ofSeconds(1));
    sentBefore.get(3).fail(1_000); // nor does a late failure end the probation
    assertThat(a.isReady()).isTrue();
    Pick<String> probe = pickA();
    assertThat(probe.isProbe()).isTrue();
  }

  @Test
  void aCancelledProbeLeavesTheEndpointInProbation() {
    failA(7);
    clock.advance(Duration.ofSeconds(1));
    Pick<String> probe = pickA();
    probe.cancel();
    assertThat(a.isReady()).isTrue();
    Pick<String> next = pickA();
    assertThat(next.isProbe()).isTrue();
    next.complete(1_000);
    assertThat(a.isShut()).isFalse();
  }

  @Test
  void resultsLaterThanTheLatencyCount() {
    for (int i = 0; i < 7; i++) {
      Pick<String> p = pickA();
      p.responded(1_000); // e.g. a gRPC response whose status comes in its trailers
      assertThat(a.isShut()).isFalse();
      p.result(false);
    }
    assertThat(a.isShut()).isTrue();
  }

  @Test
  void withoutAccrualResultsChangeNothing() {
    Endpoint<String> c = Endpoint.of("c", "c:80");
    Balancer<String> plain = Balancer.roundRobin();
    plain.update(List.of(c));
    for (int i = 0; i < 100; i++) {
      plain.pick().fail(1_000);
    }
    assertThat(c.isReady()).isTrue();
  }

  @Test
  void closeCancelsPendingTimers() {
    failA(7);
    assertThat(accrual.pendingTimers()).isEqualTo(1);
    accrual.close();
    assertThat(accrual.pendingTimers()).isZero();
    assertThat(clock.pendingTasks()).isZero();
  }

  @Test
  void timersDoNotPileUpOverManyEpisodes() {
    for (int i = 0; i < 1_000; i++) {
      failA(7);
      clock.advance(Duration.ofMinutes(1));
      pickA().complete(1_000);
    }
    assertThat(accrual.pendingTimers()).isZero();
    assertThat(clock.pendingTasks()).isZero();
  }

  @Test
  void rejectsBadSettings() {
    assertThatThrownBy(() -> new FailureAccrual.Settings(0, Duration.ofSeconds(1), Duration.ofSeconds(2), 0.5))
        .hasMessage("maxFailures: 0 (expected: >= 1)");
    assertThatThrownBy(() -> new FailureAccrual.Settings(7, Duration.ZERO, Duration.ofSeconds(2), 0.5))
        .hasMessage("minPenalty: PT0S (expected: > 0)");
    assertThatThrownBy(() -> new FailureAccrual.Settings(7, Duration.ofSeconds(3), Duration.ofSeconds(2), 0.5))
        .hasMessage("maxPenalty: PT2S (expected: >= minPenalty PT3S)");
    assertThatThrownBy(() -> new FailureAccrual.Settings(7, Duration.ofSeconds(1), Duration.ofSeconds(2), 1.5))
        .hasMessage("jitterRatio: 1.5 (expected: 0..1)");
    assertThat(FailureAccrual.Settings.LINKERD)
        .isEqualTo(new FailureAccrual.Settings(7, Duration.ofSeconds(1), Duration.ofMinutes(1), 0.5));
  }
}
