package dev.portage.core.balance;

class PriorityBalancerContractTest extends AbstractBalancerContractTest {

  @Override
  Balancer<String> newBalancer() {
    return Balancer.priority();
  }
}
