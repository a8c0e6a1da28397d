package dev.portage.core.balance;

class WeightedRoundRobinBalancerContractTest extends AbstractBalancerContractTest {

  @Override
  Balancer<String> newBalancer() {
    return Balancer.weightedRoundRobin();
  }
}
