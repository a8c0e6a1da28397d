package dev.portage.core.balance;

import static dev.portage.core.balance.AbstractBalancerContractTest.ep;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.portage.core.time.FakeClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.function.ToLongFunction;
import org.junit.jupiter.api.Test;

class PeakEwmaP2cBalancerTest {

  private static final long MS = 1_000_000;

  private final FakeClock clock = new FakeClock();
  private final Balancer<String> balancer = Balancer.peakEwmaP2c(clock, new Random(1234));

  /** Picks and completes at once with the given RTT (no time passes). */
  private String pickAndComplete(long rttNanos) {
    Pick<String> pick = balancer.pick();
    pick.complete(rttNanos);
    return pick.endpoint().id();
  }

  /**
   * One request per millisecond for {@code millis}; each stays in flight for its endpoint's RTT (the
   * completion is a timer on the fake clock). Returns picks per endpoint id.
   */
  private Map<String, Integer> run(int millis, ToLongFunction<String> rttMillisOf) {
    Map<String, Integer> counts = new HashMap<>();
    for (int i = 0; i < millis; i++) {
      Pick<String> pick = balancer.pick();
      String id = pick.endpoint().id();
      counts.merge(id, 1, Integer::sum);
      long rtt = rttMillisOf.applyAsLong(id) * MS;
      clock.scheduler().schedule(() -> pick.complete(rtt), rtt, TimeUnit.NANOSECONDS);
      clock.advance(Duration.ofMillis(1));
    }
    return counts;
  }

  @Test
  void tenTimesSlowerEndpointGetsFarLessThanItsShare() {
    balancer.update(List.of(ep("a"), ep("b"), ep("c"), ep("slow")));
    Map<String, Integer> counts = run(20_000, id -> id.equals("slow") ? 300 : 30);
    // Round robin would send it 25 % (5000); peak-EWMA keeps it under 1 %.
    assertThat(counts.getOrDefault("slow", 0)).isLessThan(200);
    assertThat(counts.get("a") + counts.get("b") + counts.get("c")).isGreaterThan(19_800);
  }

  @Test
  void withTwoEndpointsTheCheaperAlwaysWins() {
    balancer.update(List.of(ep("a"), ep("b")));
    feed("a", 10 * MS);
    feed("b", 20 * MS);
    for (int i = 0; i < 50; i++) {
      assertThat(pickAndComplete(10 * MS)).isEqualTo("a");
      clock.advance(Duration.ofMillis(10));
    }
  }

  @Test
  void peakIsTakenAtOnce() {
    balancer.update(List.of(ep("a"), ep("b")));
    feed("a", 10 * MS);
    feed("b", 20 * MS);
    clock.advance(Duration.ofMillis(1));
    assertThat(pickAndComplete(100 * MS)).isEqualTo("a"); // a now at 100 ms, without averaging
    clock.advance(Duration.ofMillis(1));
    for (int i = 0; i < 20; i++) {
      assertThat(pickAndComplete(20 * MS)).isEqualTo("b");
    }
  }

  @Test
  void inFlightRequestsRaiseTheCost() {
    balancer.update(List.of(ep("a"), ep("b")));
    List<Pick<String>> open = new ArrayList<>();
    Map<String, Integer> counts = new HashMap<>();
    for (int i = 0; i < 10; i++) {
      Pick<String> pick = balancer.pick();
      open.add(pick);
      counts.merge(pick.endpoint().id(), 1, Integer::sum);
    }
    // Equal estimates: each pick goes to the endpoint with fewer in flight.
    assertThat(counts).containsEntry("a", 5).containsEntry("b", 5);
    open.forEach(Pick::cancel);
  }

  @Test
  void decayBringsARecoveredEndpointBack() {
    balancer.update(List.of(ep("a"), ep("b"), ep("c")));
    feed("a", 30 * MS);
    feed("b", 30 * MS);
    feed("c", 300 * MS);
    // c has recovered: every endpoint now answers in 30 ms. One request every 10 ms, done at once.
    Map<String, Integer> counts = new HashMap<>();
    long firstPickOfC = -1;
    for (int i = 0; i < 4_000; i++) {
      String id = pickAndComplete(30 * MS);
      counts.merge(id, 1, Integer::sum);
      if (id.equals("c") && firstPickOfC < 0) {
        firstPickOfC = clock.nanoTime();
      }
      clock.advance(Duration.ofMillis(10));
    }
    // c is avoided until its 300 ms peak decays below the others' 30 ms: 10 s × ln(10) ≈ 23 s...
    assertThat(firstPickOfC).isBetween(22_000 * MS, 24_000 * MS);
    // ...then found fast and given its share back for the remaining ~17 s (about 1/3 of 1700).
    assertThat(counts.get("c")).isBetween(450, 700);
  }

  @Test
  void slowEndpointUnderLoadReturnsOnceItRecovers() {
    balancer.update(List.of(ep("a"), ep("b"), ep("c")));
    boolean[] cSlow = {true};
    Map<String, Integer> slow = run(5_000, id -> id.equals("c") && cSlow[0] ? 300 : 30);
    assertThat(slow.getOrDefault("c", 0)).isLessThan(50);
    cSlow[0] = false;
    run(30_000, id -> 30);
    Map<String, Integer> recovered = run(5_000, id -> 30);
    assertThat(recovered.get("c")).isBetween(1_300, 2_000);
  }

  @Test
  void failRecordsTheTimeSinceThePick() {
    balancer.update(List.of(ep("a"), ep("b")));
    Pick<String> pick = balancer.pick();
    String failed = pick.endpoint().id();
    clock.advance(Duration.ofMillis(500));
    pick.fail();
    for (int i = 0; i < 20; i++) {
      assertThat(pickAndComplete(30 * MS)).isNotEqualTo(failed);
    }
  }

  @Test
  void withAFailurePenaltyFastFailuresDoNotAttractTraffic() {
    Balancer<String> penalised =
        Balancer.peakEwmaP2c(clock, new Random(99), Duration.ofSeconds(10), Duration.ofMillis(30), Duration.ofSeconds(5));
    penalised.update(List.of(ep("a"), ep("b"), ep("c"), ep("failing")));
    Map<String, Integer> counts = new HashMap<>();
    for (int i = 0; i < 10_000; i++) {
      Pick<String> pick = penalised.pick();
      String id = pick.endpoint().id();
      counts.merge(id, 1, Integer::sum);
      if (id.equals("failing")) {
        pick.fail(100_000); // a 503 in 0.1 ms: faster than any success
      } else {
        pick.complete(2 * MS);
      }
      clock.advance(Duration.ofMillis(1));
    }
    // Ten seconds of traffic: the first failure costs 5 s, still ~1.8 s at the end, while the others
    // cost 2 ms; without the penalty the failing endpoint would take the most traffic of all.
    assertThat(counts.getOrDefault("failing", 0)).isLessThan(5);
    Endpoint<String> failing = penalised.endpoints().get(3);
    assertThat(penalised.latencyEstimateNanos(failing)).isGreaterThan(1_000.0 * MS);
  }

  @Test
  void withoutAPenaltyAFastFailureIsRecordedAtItsTime() {
    balancer.update(List.of(ep("a"), ep("b")));
    Pick<String> pick = balancer.pick();
    Endpoint<String> e = pick.endpoint();
    pick.fail(2 * MS);
    // Below the 30 ms estimate, blended with weight 0 at once: the estimate does not move up.
    assertThat(balancer.latencyEstimateNanos(e)).isEqualTo(30.0 * MS);
  }

  @Test
  void reachableAgainStartsOverAtTheDefaultRtt() {
    Balancer<String> penalised =
        Balancer.peakEwmaP2c(clock, new Random(3), Duration.ofSeconds(10), Duration.ofMillis(30), Duration.ofSeconds(5));
    penalised.update(List.of(ep("a"), ep("b")));
    Pick<String> pick = penalised.pick();
    Endpoint<String> e = pick.endpoint();
    pick.fail();
    assertThat(penalised.latencyEstimateNanos(e)).isEqualTo(5_000.0 * MS);
    e.setReachable(false);
    e.setReachable(true);
    assertThat(penalised.latencyEstimateNanos(e)).isEqualTo(30.0 * MS);
  }

  @Test
  void cancelRecordsNoLatency() {
    balancer.update(List.of(ep("a"), ep("b")));
    feed("a", 30 * MS);
    feed("b", 40 * MS);
    Pick<String> pick = balancer.pick();
    assertThat(pick.endpoint().id()).isEqualTo("a");
    clock.advance(Duration.ofMillis(500));
    pick.cancel();
    assertThat(pickAndComplete(30 * MS)).isEqualTo("a");
  }

  @Test
  void costIsTheDecayedEstimateTimesInFlightPlusOneAndReadingItChangesNothing() {
    balancer.update(List.of(ep("a"), ep("b")));
    Endpoint<String> a = balancer.endpoints().get(0);
    Endpoint<String> b = balancer.endpoints().get(1);
    feed("a", 10 * MS);

    assertThat(balancer.costNanos(a)).isEqualTo(10.0 * MS);
    assertThat(balancer.costNanos(b)).isEqualTo(30.0 * MS); // the default RTT, not seeded by the read
    assertThat(b.rtt().get()).isNull();
    clock.advance(Duration.ofSeconds(10)); // one decay time constant
    assertThat(balancer.costNanos(a)).isCloseTo(10.0 * MS / Math.E, org.assertj.core.data.Offset.offset(1.0));
    List<Pick<String>> open = new ArrayList<>();
    while (a.inFlight() < 2) {
      open.add(balancer.pick());
    }
    assertThat(balancer.costNanos(a)).isCloseTo(3 * 10.0 * MS / Math.E, org.assertj.core.data.Offset.offset(3.0));
    open.forEach(Pick::cancel);
  }

  @Test
  void balancersThatDoNotWeighLoadHaveNoCost() {
    Balancer<String> rr = Balancer.roundRobin();
    rr.update(List.of(ep("a")));
    assertThat(rr.costNanos(rr.endpoints().get(0))).isNaN();
  }

  @Test
  void rejectsBadSettings() {
    Random random = new Random(1);
    assertThatThrownBy(() -> Balancer.peakEwmaP2c(clock, random, Duration.ZERO, Duration.ofMillis(30)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("decay: PT0S (expected: > 0)");
    assertThatThrownBy(
            () -> Balancer.peakEwmaP2c(clock, random, Duration.ofSeconds(10), Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("defaultRtt: PT-0.001S (expected: > 0)");
    assertThatThrownBy(() -> Balancer.peakEwmaP2c(null, random))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("ticker");
    assertThatThrownBy(
            () -> Balancer.peakEwmaP2c(clock, random, Duration.ofSeconds(10), Duration.ofMillis(30), Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("failurePenalty: PT-0.001S (expected: >= 0)");
  }

  /** Sets an endpoint's latency estimate to exactly {@code rttNanos} as of now. */
  @Test
  void latencyEstimateIsTheDefaultRttUntilObservedThenTheDecayedPeak() {
    balancer.update(List.of(ep("a"), ep("b")));
    Endpoint<String> a = balancer.endpoints().get(0);
    assertThat(balancer.latencyEstimateNanos(a)).isEqualTo(30.0 * MS);
    assertThat(a.rtt().get()).as("reading the estimate seeds nothing").isNull();

    feed("a", 100 * MS);
    assertThat(balancer.latencyEstimateNanos(a)).isEqualTo(100.0 * MS);
    clock.advance(Duration.ofSeconds(10)); // one decay time constant
    assertThat(balancer.latencyEstimateNanos(a)).isCloseTo(100.0 * MS / Math.E, within(1.0));
  }

  private void feed(String id, long rttNanos) {
    Endpoint<String> e =
        balancer.endpoints().stream().filter(x -> x.id().equals(id)).findFirst().orElseThrow();
    e.rtt().set(new RttEstimate(rttNanos, clock.nanoTime()));
  }
}
