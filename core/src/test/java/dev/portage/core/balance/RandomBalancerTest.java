package dev.portage.core.balance;

import static dev.portage.core.balance.AbstractBalancerContractTest.ep;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

class RandomBalancerTest {

  private static Map<String, Integer> counts(Balancer<String> balancer, int n) {
    Map<String, Integer> counts = new HashMap<>();
    for (int i = 0; i < n; i++) {
      Pick<String> pick = balancer.pick();
      counts.merge(pick.endpoint().id(), 1, Integer::sum);
      pick.complete(0);
    }
    return counts;
  }

  @Test
  void spreadsUniformlyOverHealthyEndpoints() {
    Balancer<String> balancer = Balancer.random(new Random(7));
    Endpoint<String> down = ep("down");
    balancer.update(List.of(ep("a"), down, ep("b"), ep("c")));
    down.setHealthy(false);
    Map<String, Integer> counts = counts(balancer, 30_000);
    assertThat(counts).containsOnlyKeys("a", "b", "c");
    assertThat(counts.values()).allSatisfy(c -> assertThat(c).isBetween(9_500, 10_500));
  }

  @Test
  void findsTheFewHealthyAmongManyUnhealthy() {
    Balancer<String> balancer = Balancer.random(new Random(7));
    List<Endpoint<String>> all = new ArrayList<>();
    for (int i = 0; i < 1000; i++) {
      Endpoint<String> e = ep("e" + i);
      e.setHealthy(i == 17 || i == 900);
      all.add(e);
    }
    balancer.update(all);
    Map<String, Integer> counts = counts(balancer, 2_000);
    assertThat(counts).containsOnlyKeys("e17", "e900");
    assertThat(counts.get("e17")).isBetween(900, 1_100);
  }

  @Test
  void requiresARandomGenerator() {
    assertThatThrownBy(() -> Balancer.random(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("random");
  }
}
