package dev.portage.core.balance;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class WeightedRoundRobinBalancerTest {

  private static List<String> picks(Balancer<String> balancer, int n) {
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      Pick<String> pick = balancer.pick();
      ids.add(pick.endpoint().id());
      pick.complete(0);
    }
    return ids;
  }

  @Test
  void interleavesLikeNginx() {
    Balancer<String> balancer = Balancer.weightedRoundRobin();
    balancer.update(List.of(Endpoint.of("a", "a:1", 5), Endpoint.of("b", "b:1", 1), Endpoint.of("c", "c:1", 1)));
    assertThat(picks(balancer, 14))
        .containsExactly("a", "a", "b", "a", "c", "a", "a", "a", "a", "b", "a", "c", "a", "a");
  }

  @Test
  void sharesAreExactOverWholeCycles() {
    Balancer<String> balancer = Balancer.weightedRoundRobin();
    balancer.update(List.of(Endpoint.of("a", "a:1", 3), Endpoint.of("b", "b:1", 2), Endpoint.of("c", "c:1", 5)));
    List<String> ids = picks(balancer, 1000);
    assertThat(ids.stream().filter("a"::equals).count()).isEqualTo(300);
    assertThat(ids.stream().filter("b"::equals).count()).isEqualTo(200);
    assertThat(ids.stream().filter("c"::equals).count()).isEqualTo(500);
  }

  @Test
  void equalWeightsAreRoundRobin() {
    Balancer<String> balancer = Balancer.weightedRoundRobin();
    balancer.update(List.of(Endpoint.of("a", "a:1"), Endpoint.of("b", "b:1"), Endpoint.of("c", "c:1")));
    assertThat(picks(balancer, 6)).containsExactly("a", "b", "c", "a", "b", "c");
  }

  @Test
  void unhealthyEndpointsGetNoShare() {
    Balancer<String> balancer = Balancer.weightedRoundRobin();
    Endpoint<String> a = Endpoint.of("a", "a:1", 5);
    balancer.update(List.of(a, Endpoint.of("b", "b:1", 1), Endpoint.of("c", "c:1", 2)));
    a.setHealthy(false);
    assertThat(picks(balancer, 6)).containsExactly("c", "b", "c", "c", "b", "c");
  }
}
