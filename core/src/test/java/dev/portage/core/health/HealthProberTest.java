package dev.portage.core.health;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.portage.core.balance.Balancer;
import dev.portage.core.balance.Endpoint;
import dev.portage.core.balance.Pick;
import dev.portage.core.time.FakeClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class HealthProberTest {

  private static final Duration INTERVAL = Duration.ofSeconds(10);

  private final FakeClock clock = new FakeClock();
  private final Map<String, Boolean> up = new HashMap<>();
  private final Map<String, Integer> probes = new HashMap<>();
  private final List<String> transitions = new ArrayList<>();
  private final List<CompletableFuture<Boolean>> hanging = new ArrayList<>();
  private HealthProber<String> prober;

  /** Answers at once from {@link #up}; ids missing from it never answer. */
  private CompletionStage<Boolean> probe(Endpoint<String> e) {
    probes.merge(e.id(), 1, Integer::sum);
    Boolean answer = up.get(e.id());
    if (answer == null) {
      CompletableFuture<Boolean> f = new CompletableFuture<>();
      hanging.add(f);
      return f;
    }
    return CompletableFuture.completedFuture(answer);
  }

  private HealthProber.Builder<String> builder() {
    return HealthProber.<String>builder(clock.timeSource(), this::probe)
        .listener((e, healthy) -> transitions.add(e.id() + (healthy ? " up" : " down")));
  }

  @AfterEach
  void closeProber() {
    if (prober != null) {
      prober.close();
      assertThat(clock.pendingTasks()).isZero();
    }
  }

  @Test
  void serverGoingDownIsUnhealthyAfterExactlyThreeFailedProbes() {
    Endpoint<String> a = Endpoint.of("a", "a:443");
    up.put("a", true);
    prober = builder().build();
    prober.setEndpoints(List.of(a));
    clock.runDue();
    assertThat(probes.get("a")).isEqualTo(1);
    assertThat(a.isHealthy()).isTrue();

    up.put("a", false);
    clock.advance(INTERVAL);
    clock.advance(INTERVAL);
    assertThat(a.isHealthy()).as("after 2 failures").isTrue();
    clock.advance(INTERVAL);
    assertThat(a.isHealthy()).as("after 3 failures").isFalse();
    assertThat(transitions).containsExactly("a down");

    up.put("a", true);
    clock.advance(INTERVAL);
    assertThat(a.isHealthy()).as("after 1 success").isFalse();
    clock.advance(INTERVAL);
    assertThat(a.isHealthy()).as("after 2 successes").isTrue();
    assertThat(transitions).containsExactly("a down", "a up");
    assertThat(probes.get("a")).isEqualTo(6);
  }

  @Test
  void aSuccessResetsTheFailureStreak() {
    Endpoint<String> a = Endpoint.of("a", "a:443");
    up.put("a", false);
    prober = builder().build();
    prober.setEndpoints(List.of(a));
    clock.runDue(); // failure 1
    clock.advance(INTERVAL); // failure 2
    up.put("a", true);
    clock.advance(INTERVAL); // success
    up.put("a", false);
    clock.advance(INTERVAL);
    clock.advance(INTERVAL);
    assertThat(a.isHealthy()).isTrue();
    clock.advance(INTERVAL);
    assertThat(a.isHealthy()).isFalse();
  }

  @Test
  void probeWithoutAnswerFailsAtTheTimeoutAndIsCancelled() {
    Endpoint<String> a = Endpoint.of("a", "a:443");
    prober = builder().build(); // "a" is not in `up`: its probes hang
    prober.setEndpoints(List.of(a));
    clock.runDue();
    clock.advance(Duration.ofMillis(1_999));
    assertThat(hanging.get(0)).isNotDone();
    clock.advance(Duration.ofMillis(1));
    assertThat(hanging.get(0)).isCancelled();

    clock.advance(Duration.ofSeconds(18)); // t = 20 s: third probe starts
    assertThat(a.isHealthy()).isTrue();
    clock.advance(Duration.ofMillis(1_999));
    assertThat(a.isHealthy()).isTrue();
    clock.advance(Duration.ofMillis(1));
    assertThat(a.isHealthy()).isFalse();
    assertThat(hanging).hasSize(3).allSatisfy(f -> assertThat(f).isCancelled());
  }

  @Test
  void lateAnswerAfterTheTimeoutIsIgnored() {
    Endpoint<String> a = Endpoint.of("a", "a:443");
    CompletableFuture<Boolean> answer = new CompletableFuture<>();
    // A stage that is not a Future cannot be cancelled, so its answer can still arrive late.
    prober = HealthProber.<String>builder(clock.timeSource(), e -> answer.minimalCompletionStage())
        .initiallyHealthy(false)
        .healthyThreshold(1)
        .build();
    prober.setEndpoints(List.of(a));
    assertThat(a.isHealthy()).isFalse();
    clock.runDue();
    clock.advance(Duration.ofSeconds(3));
    answer.complete(true);
    assertThat(a.isHealthy()).isFalse();
  }

  @Test
  void falseExceptionalThrowingAndNullProbesAreFailures() {
    Endpoint<String> a = Endpoint.of("a", "a:443");
    List<String> kinds = new ArrayList<>();
    prober = HealthProber.<String>builder(clock.timeSource(), e -> {
          switch (kinds.size()) {
            case 0 -> {
              kinds.add("false");
              return CompletableFuture.completedFuture(false);
            }
            case 1 -> {
              kinds.add("exceptional");
              return CompletableFuture.failedFuture(new java.io.IOException("connection refused"));
            }
            case 2 -> {
              kinds.add("thrown");
              throw new IllegalStateException("probe bug");
            }
            default -> {
              kinds.add("null");
              return null;
            }
          }
        })
        .unhealthyThreshold(4)
        .build();
    prober.setEndpoints(List.of(a));
    clock.runDue();
    clock.advance(INTERVAL);
    clock.advance(INTERVAL);
    assertThat(a.isHealthy()).isTrue();
    clock.advance(INTERVAL);
    assertThat(kinds).containsExactly("false", "exceptional", "thrown", "null");
    assertThat(a.isHealthy()).isFalse();
  }

  @Test
  void initiallyUnhealthyEndpointNeedsTheHealthyThreshold() {
    Endpoint<String> a = Endpoint.of("a", "a:443");
    up.put("a", true);
    prober = builder().initiallyHealthy(false).build();
    prober.setEndpoints(List.of(a));
    assertThat(a.isHealthy()).isFalse();
    clock.runDue();
    assertThat(a.isHealthy()).isFalse();
    clock.advance(INTERVAL);
    assertThat(a.isHealthy()).isTrue();
    assertThat(transitions).containsExactly("a up");
  }

  @Test
  void removedEndpointsStopBeingProbedAndKeptOnesKeepTheirCounts() {
    Endpoint<String> a = Endpoint.of("a", "a:443");
    Endpoint<String> b = Endpoint.of("b", "b:443");
    up.put("a", true);
    up.put("b", false);
    prober = builder().build();
    prober.setEndpoints(List.of(a, b));
    clock.runDue();
    clock.advance(INTERVAL); // b: 2 failures

    prober.setEndpoints(List.of(b));
    assertThat(clock.pendingTasks()).isEqualTo(1);
    int aProbes = probes.get("a");
    clock.advance(INTERVAL); // b: third failure, counted on top of the kept two
    assertThat(b.isHealthy()).isFalse();
    clock.advance(INTERVAL.multipliedBy(5));
    assertThat(probes.get("a")).isEqualTo(aProbes);
    assertThat(probes.get("b")).isEqualTo(8);
  }

  @Test
  void removingAnEndpointCancelsItsProbeInFlight() {
    Endpoint<String> a = Endpoint.of("a", "a:443");
    prober = builder().build();
    prober.setEndpoints(List.of(a));
    clock.runDue();
    assertThat(hanging).hasSize(1);
    prober.setEndpoints(List.of());
    assertThat(hanging.get(0)).isCancelled();
    assertThat(clock.pendingTasks()).isZero();
  }

  @Test
  void closeCancelsEveryTimer() {
    up.put("a", true);
    prober = builder().build();
    prober.setEndpoints(List.of(Endpoint.of("a", "a:443"), Endpoint.of("b", "b:443")));
    clock.runDue();
    assertThat(clock.pendingTasks()).isEqualTo(3); // two tickers and b's timeout
    prober.close();
    prober.close();
    assertThat(clock.pendingTasks()).isZero();
    assertThat(hanging.get(0)).isCancelled();
    clock.advance(INTERVAL.multipliedBy(3));
    assertThat(probes).containsEntry("a", 1).containsEntry("b", 1);
    assertThatThrownBy(() -> prober.setEndpoints(List.of()))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("health prober closed");
  }

  @Test
  void failingListenerDoesNotStopProbing() {
    Endpoint<String> a = Endpoint.of("a", "a:443");
    up.put("a", false);
    prober = HealthProber.<String>builder(clock.timeSource(), this::probe)
        .unhealthyThreshold(1)
        .healthyThreshold(1)
        .listener((e, healthy) -> {
          throw new IllegalStateException("listener bug");
        })
        .build();
    prober.setEndpoints(List.of(a));
    clock.runDue();
    assertThat(a.isHealthy()).isFalse();
    up.put("a", true);
    clock.advance(INTERVAL);
    assertThat(a.isHealthy()).isTrue();
  }

  @Test
  void balancerSkipsWhatTheProberFoundDown() {
    Balancer<String> balancer = Balancer.roundRobin();
    balancer.update(List.of(Endpoint.of("a", "a:443"), Endpoint.of("b", "b:443")));
    up.put("a", false);
    up.put("b", true);
    prober = builder().unhealthyThreshold(1).build();
    prober.setEndpoints(balancer.endpoints());
    clock.runDue();
    for (int i = 0; i < 4; i++) {
      Pick<String> pick = balancer.pick();
      assertThat(pick.endpoint().id()).isEqualTo("b");
      pick.complete(0);
    }
  }

  @Test
  void builderRejectsBadSettings() {
    HealthProber.Builder<String> b = builder();
    assertThatThrownBy(() -> b.interval(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("interval: PT0S (expected: > 0)");
    assertThatThrownBy(() -> b.timeout(Duration.ofSeconds(-1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("timeout: PT-1S (expected: > 0)");
    assertThatThrownBy(() -> b.healthyThreshold(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("healthyThreshold: 0 (expected: >= 1)");
    assertThatThrownBy(() -> b.unhealthyThreshold(-2))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("unhealthyThreshold: -2 (expected: >= 1)");
    assertThatThrownBy(() -> HealthProber.<String>builder(clock.timeSource(), null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("probe");
  }
}
