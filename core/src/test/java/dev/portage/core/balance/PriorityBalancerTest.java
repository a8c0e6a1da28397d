package dev.portage.core.balance;

import static dev.portage.core.balance.AbstractBalancerContractTest.ep;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class PriorityBalancerTest {

  private static String pickId(Balancer<String> balancer) {
    Pick<String> pick = balancer.pick();
    pick.complete(0);
    return pick.endpoint().id();
  }

  @Test
  void picksFirstHealthyInConfiguredOrder() {
    Balancer<String> balancer = Balancer.priority();
    Endpoint<String> primary = ep("primary");
    Endpoint<String> secondary = ep("secondary");
    balancer.update(List.of(primary, secondary, ep("tertiary")));
    assertThat(pickId(balancer)).isEqualTo("primary");
    assertThat(pickId(balancer)).isEqualTo("primary");

    primary.setHealthy(false);
    assertThat(pickId(balancer)).isEqualTo("secondary");
    secondary.setHealthy(false);
    assertThat(pickId(balancer)).isEqualTo("tertiary");

    primary.setHealthy(true);
    assertThat(pickId(balancer)).isEqualTo("primary");
  }

  @Test
  void followsTheOrderOfTheLatestUpdate() {
    Balancer<String> balancer = Balancer.priority();
    balancer.update(List.of(ep("a"), ep("b")));
    assertThat(pickId(balancer)).isEqualTo("a");
    balancer.update(List.of(ep("b"), ep("a")));
    assertThat(pickId(balancer)).isEqualTo("b");
  }
}
