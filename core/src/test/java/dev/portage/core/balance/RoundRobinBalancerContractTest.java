package dev.portage.core.balance;

class RoundRobinBalancerContractTest extends AbstractBalancerContractTest {

  @Override
  Balancer<String> newBalancer() {
    return Balancer.roundRobin();
  }
}
