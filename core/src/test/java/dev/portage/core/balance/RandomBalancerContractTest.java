package dev.portage.core.balance;

class RandomBalancerContractTest extends AbstractBalancerContractTest {

  @Override
  Balancer<String> newBalancer() {
    return Balancer.random(new java.util.Random(42));
  }
}
