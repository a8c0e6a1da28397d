package dev.portage.core.balance;

import static dev.portage.core.balance.AbstractBalancerContractTest.ep;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class RoundRobinBalancerTest {

  private static List<String> picks(Balancer<String> balancer, int n) {
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      Pick<String> pick = balancer.pick();
      ids.add(pick == null ? null : pick.endpoint().id());
      if (pick != null) {
        pick.complete(0);
      }
    }
    return ids;
  }

  @Test
  void cyclesInUpdateOrder() {
    Balancer<String> balancer = Balancer.roundRobin();
    balancer.update(List.of(ep("a"), ep("b"), ep("c")));
    assertThat(picks(balancer, 7)).containsExactly("a", "b", "c", "a", "b", "c", "a");
  }

  @Test
  void skipsUnhealthyEndpoints() {
    Balancer<String> balancer = Balancer.roundRobin();
    Endpoint<String> b = ep("b");
    balancer.update(List.of(ep("a"), b, ep("c")));
    b.setHealthy(false);
    assertThat(picks(balancer, 5)).containsExactly("a", "c", "a", "c", "a");
  }

  @Test
  void resumesAfterTheLastPickNotAfterTheSkippedOnes() {
    Balancer<String> balancer = Balancer.roundRobin();
    Endpoint<String> b = ep("b");
    Endpoint<String> c = ep("c");
    balancer.update(List.of(ep("a"), b, c, ep("d")));
    assertThat(picks(balancer, 1)).containsExactly("a");
    b.setHealthy(false);
    c.setHealthy(false);
    assertThat(picks(balancer, 1)).containsExactly("d");
    b.setHealthy(true);
    c.setHealthy(true);
    // The walk restarts after d, the last pick: a, not b.
    assertThat(picks(balancer, 4)).containsExactly("a", "b", "c", "d");
  }

  @Test
  void keepsItsPositionAcrossUpdates() {
    Balancer<String> balancer = Balancer.roundRobin();
    balancer.update(List.of(ep("a"), ep("b"), ep("c")));
    assertThat(picks(balancer, 2)).containsExactly("a", "b");
    balancer.update(List.of(ep("a"), ep("b"), ep("c"), ep("d")));
    assertThat(picks(balancer, 3)).containsExactly("c", "d", "a");
  }

  @Test
  void spreadsEvenlyOverManyPicks() {
    Balancer<String> balancer = Balancer.roundRobin();
    balancer.update(List.of(ep("a"), ep("b"), ep("c")));
    List<String> ids = picks(balancer, 3000);
    assertThat(ids.stream().filter("a"::equals).count()).isEqualTo(1000);
    assertThat(ids.stream().filter("b"::equals).count()).isEqualTo(1000);
    assertThat(ids.stream().filter("c"::equals).count()).isEqualTo(1000);
  }

  @Test
  void hasNoLatencyEstimate() {
    Balancer<String> balancer = Balancer.roundRobin();
    balancer.update(List.of(ep("a")));
    assertThat(balancer.latencyEstimateNanos(balancer.endpoints().get(0))).isNaN();
  }
}
