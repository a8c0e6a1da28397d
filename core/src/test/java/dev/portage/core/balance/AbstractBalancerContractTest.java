package dev.portage.core.balance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.portage.core.time.FakeClock;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** What every {@link Balancer} promises, run once per implementation by a subclass. */
abstract class AbstractBalancerContractTest {

  final FakeClock clock = new FakeClock();
  private ExecutorService pool;

  /** A fresh balancer; may read time from {@link #clock}. */
  abstract Balancer<String> newBalancer();

  static Endpoint<String> ep(String id) {
    return Endpoint.of(id, id + ".example:443");
  }

  @SafeVarargs
  static List<Endpoint<String>> list(Endpoint<String>... endpoints) {
    return Arrays.asList(endpoints);
  }

  @AfterEach
  void stopPool() throws InterruptedException {
    if (pool != null) {
      pool.shutdownNow();
      assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }
  }

  @Test
  void emptySetPicksNull() {
    Balancer<String> balancer = newBalancer();
    assertThat(balancer.pick()).isNull();
    balancer.update(List.of());
    assertThat(balancer.pick()).isNull();
    assertThat(balancer.endpoints()).isEmpty();
  }

  @Test
  void allUnhealthyPicksNull() {
    Balancer<String> balancer = newBalancer();
    Endpoint<String> a = ep("a");
    Endpoint<String> b = ep("b");
    balancer.update(list(a, b));
    a.setHealthy(false);
    b.setHealthy(false);
    for (int i = 0; i < 10; i++) {
      assertThat(balancer.pick()).isNull();
    }
    assertThat(a.inFlight()).isZero();
    assertThat(b.inFlight()).isZero();
  }

  @Test
  void neverPicksUnhealthyEndpoint() {
    Balancer<String> balancer = newBalancer();
    Endpoint<String> a = ep("a");
    Endpoint<String> b = ep("b");
    Endpoint<String> c = ep("c");
    balancer.update(list(a, b, c));
    a.setHealthy(false);
    Set<String> picked = new HashSet<>();
    for (int i = 0; i < 300; i++) {
      Pick<String> pick = balancer.pick();
      assertThat(pick).isNotNull();
      picked.add(pick.endpoint().id());
      pick.complete(1_000_000);
      clock.advance(java.time.Duration.ofMillis(1));
    }
    assertThat(picked).doesNotContain("a").isNotEmpty();
  }

  @Test
  void neverPicksUnreachableEndpointAndPicksItAgainOnceReachable() {
    Balancer<String> balancer = newBalancer();
    Endpoint<String> a = ep("a");
    Endpoint<String> b = ep("b");
    balancer.update(list(a, b));
    assertThat(a.setReachable(false)).isTrue();
    assertThat(a.isReady()).isFalse();
    assertThat(a.isHealthy()).as("reachability and health are separate").isTrue();
    for (int i = 0; i < 50; i++) {
      Pick<String> pick = balancer.pick();
      assertThat(pick.endpoint()).isSameAs(b);
      pick.complete(1_000_000);
    }
    b.setReachable(false);
    assertThat(balancer.pick()).isNull();
    a.setReachable(true);
    assertThat(balancer.pick().endpoint()).isSameAs(a);
  }

  @Test
  void unhealthyAndUnreachableAreIndependent() {
    Balancer<String> balancer = newBalancer();
    Endpoint<String> a = ep("a");
    balancer.update(list(a));
    a.setReachable(false);
    a.setHealthy(false);
    a.setHealthy(true); // a health check passing does not make a refused endpoint reachable
    assertThat(balancer.pick()).isNull();
    a.setReachable(true);
    assertThat(balancer.pick()).isNotNull();
  }

  @Test
  void shutEndpointIsSkippedAndProbationAdmitsExactlyOneProbe() {
    Balancer<String> balancer = newBalancer();
    Endpoint<String> a = ep("a");
    Endpoint<String> b = ep("b");
    balancer.update(list(a, b));
    FailureAccrual accrual = new FailureAccrual(
        new FailureAccrual.Settings(2, java.time.Duration.ofSeconds(1), java.time.Duration.ofSeconds(8), 0),
        clock.scheduler(), new java.util.Random(1), e -> { });
    accrual.watch(a);
    accrual.watch(b);
    for (int i = 0; i < 2; i++) {
      pickOf(balancer, a).fail(1_000);
    }
    assertThat(a.isShut()).isTrue();
    for (int i = 0; i < 20; i++) {
      Pick<String> pick = balancer.pick();
      assertThat(pick.endpoint()).isSameAs(b);
      pick.complete(1_000_000);
    }
    clock.advance(java.time.Duration.ofSeconds(1));
    assertThat(a.isReady()).as("probation").isTrue();
    Pick<String> probe = pickOf(balancer, a);
    assertThat(probe.isProbe()).isTrue();
    for (int i = 0; i < 20; i++) {
      Pick<String> pick = balancer.pick();
      assertThat(pick.endpoint()).as("one probe at a time").isSameAs(b);
      pick.complete(1_000_000);
    }
    probe.complete(1_000_000);
    assertThat(a.isReady()).isTrue();
    assertThat(a.isShut()).isFalse();
    assertThat(pickOf(balancer, a).isProbe()).isFalse();
  }

  /** Picks until {@code e} comes up (other picks are cancelled). */
  static Pick<String> pickOf(Balancer<String> balancer, Endpoint<String> e) {
    for (int i = 0; i < 1_000; i++) {
      Pick<String> pick = balancer.pick();
      if (pick != null && pick.endpoint() == e) {
        return pick;
      }
      if (pick != null) {
        pick.cancel();
      }
    }
    throw new AssertionError(e.id() + " never picked");
  }

  @Test
  void recoveredEndpointIsPickedAgain() {
    Balancer<String> balancer = newBalancer();
    Endpoint<String> a = ep("a");
    balancer.update(list(a));
    a.setHealthy(false);
    assertThat(balancer.pick()).isNull();
    a.setHealthy(true);
    assertThat(balancer.pick().endpoint()).isSameAs(a);
  }

  @Test
  void singleHealthyEndpointIsAlwaysPicked() {
    Balancer<String> balancer = newBalancer();
    Endpoint<String> a = ep("a");
    Endpoint<String> b = ep("b");
    Endpoint<String> c = ep("c");
    balancer.update(list(a, b, c));
    a.setHealthy(false);
    c.setHealthy(false);
    for (int i = 0; i < 20; i++) {
      Pick<String> pick = balancer.pick();
      assertThat(pick.endpoint()).isSameAs(b);
      assertThat(pick.target()).isEqualTo("b.example:443");
      pick.complete(1_000_000);
    }
  }

  @Test
  void updateKeepsStateOfUnchangedEndpoints() {
    Balancer<String> balancer = newBalancer();
    Endpoint<String> a = ep("a");
    Endpoint<String> b = ep("b");
    balancer.update(list(a, b));
    a.setHealthy(false);
    Pick<String> open = balancer.pick();
    assertThat(open.endpoint()).isSameAs(b);

    balancer.update(list(ep("c"), ep("a"), ep("b")));

    List<Endpoint<String>> now = balancer.endpoints();
    assertThat(now).extracting(Endpoint::id).containsExactly("c", "a", "b");
    assertThat(now.get(1)).isSameAs(a);
    assertThat(now.get(2)).isSameAs(b);
    assertThat(now.get(1).isHealthy()).isFalse();
    assertThat(now.get(2).inFlight()).isEqualTo(1);
    open.complete(1_000_000);
    assertThat(b.inFlight()).isZero();
  }

  @Test
  void changedEndpointStartsFresh() {
    Balancer<String> balancer = newBalancer();
    Endpoint<String> a = ep("a");
    balancer.update(list(a));
    a.setHealthy(false);

    Endpoint<String> moved = Endpoint.of("a", "10.0.0.9:443");
    balancer.update(list(moved));
    assertThat(balancer.endpoints()).containsExactly(moved);
    assertThat(balancer.pick().endpoint()).isSameAs(moved);

    Endpoint<String> reweighted = Endpoint.of("a", "10.0.0.9:443", 3);
    balancer.update(list(reweighted));
    assertThat(balancer.endpoints()).containsExactly(reweighted);
  }

  @Test
  void removedEndpointIsNeverPicked() {
    Balancer<String> balancer = newBalancer();
    balancer.update(list(ep("a"), ep("b")));
    balancer.update(list(ep("b")));
    for (int i = 0; i < 20; i++) {
      Pick<String> pick = balancer.pick();
      assertThat(pick.endpoint().id()).isEqualTo("b");
      pick.cancel();
    }
  }

  @Test
  void updateRejectsDuplicateIdsAndNulls() {
    Balancer<String> balancer = newBalancer();
    balancer.update(list(ep("a")));
    assertThatThrownBy(() -> balancer.update(list(ep("x"), Endpoint.of("x", "other:1"))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("duplicate endpoint id: x");
    assertThatThrownBy(() -> balancer.update(null)).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> balancer.update(list(ep("b"), null)))
        .isInstanceOf(NullPointerException.class);
    // A rejected update leaves the previous set in place.
    assertThat(balancer.endpoints()).extracting(Endpoint::id).containsExactly("a");
  }

  @Test
  void endpointsSnapshotIsImmutable() {
    Balancer<String> balancer = newBalancer();
    balancer.update(new ArrayList<>(list(ep("a"))));
    assertThatThrownBy(() -> balancer.endpoints().add(ep("b")))
        .isInstanceOf(UnsupportedOperationException.class);
  }

  @Test
  void pickIsInFlightUntilEndedOnce() {
    Balancer<String> balancer = newBalancer();
    Endpoint<String> a = ep("a");
    balancer.update(list(a));
    Pick<String> first = balancer.pick();
    Pick<String> second = balancer.pick();
    Pick<String> third = balancer.pick();
    assertThat(a.inFlight()).isEqualTo(3);

    first.complete(2_000_000);
    first.complete(2_000_000);
    first.fail();
    assertThat(first.isDone()).isTrue();
    assertThat(a.inFlight()).isEqualTo(2);
    second.fail();
    second.cancel();
    assertThat(a.inFlight()).isEqualTo(1);
    third.cancel();
    third.complete(1);
    assertThat(a.inFlight()).isZero();
  }

  @Test
  void negativeRttIsRejectedAndLeavesPickOpen() {
    Balancer<String> balancer = newBalancer();
    Endpoint<String> a = ep("a");
    balancer.update(list(a));
    Pick<String> pick = balancer.pick();
    assertThatThrownBy(() -> pick.complete(-1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("rttNanos: -1 (expected: >= 0)");
    assertThat(pick.isDone()).isFalse();
    assertThat(a.inFlight()).isEqualTo(1);
    pick.complete(0);
    assertThat(a.inFlight()).isZero();
  }

  @Test
  void concurrentPicksUpdatesAndHealthChangesAreSafe() throws Exception {
    Balancer<String> balancer = newBalancer();
    List<Endpoint<String>> all = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      all.add(ep("e" + i));
    }
    balancer.update(all);
    pool = Executors.newFixedThreadPool(4);
    CountDownLatch start = new CountDownLatch(1);
    int picksPerThread = 20_000;
    List<Future<Integer>> pickers = new ArrayList<>();
    for (int t = 0; t < 3; t++) {
      int seed = t;
      pickers.add(pool.submit(() -> {
        start.await();
        int picked = 0;
        for (int i = 0; i < picksPerThread; i++) {
          Pick<String> pick = balancer.pick();
          if (pick != null) {
            picked++;
            switch ((i + seed) % 3) {
              case 0 -> pick.complete(1_000_000L + i);
              case 1 -> pick.fail();
              default -> pick.cancel();
            }
          }
        }
        return picked;
      }));
    }
    Future<?> churn = pool.submit(() -> {
      start.await();
      for (int i = 0; i < 2_000; i++) {
        all.get(i % all.size()).setHealthy(i % 3 != 0);
        balancer.update(i % 2 == 0 ? all : all.subList(0, 5));
      }
      return null;
    });
    start.countDown();
    churn.get(30, TimeUnit.SECONDS);
    int total = 0;
    for (Future<Integer> f : pickers) {
      total += f.get(30, TimeUnit.SECONDS);
    }
    assertThat(total).isPositive();
    for (Endpoint<String> e : all) {
      assertThat(e.inFlight()).as("in flight of %s", e.id()).isZero();
    }
  }
}
