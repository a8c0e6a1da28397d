package dev.portage.core.balance;

class PeakEwmaP2cBalancerContractTest extends AbstractBalancerContractTest {

  @Override
  Balancer<String> newBalancer() {
    return Balancer.peakEwmaP2c(clock, new java.util.Random(42));
  }
}
