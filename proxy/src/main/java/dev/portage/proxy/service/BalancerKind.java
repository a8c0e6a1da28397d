package dev.portage.proxy.service;

import dev.portage.core.balance.Balancer;
import dev.portage.core.time.Ticker;
import java.net.InetSocketAddress;
import java.util.concurrent.ThreadLocalRandom;

/** How a service spreads its connections over its endpoints; the names are the file's values. */
enum BalancerKind {
  ROUND_ROBIN("round-robin"),
  RANDOM("random"),
  /** Power of two choices over the peak-EWMA of connect times. */
  P2C_EWMA("p2c-ewma");

  final String label;

  BalancerKind(String label) {
    this.label = label;
  }

  /** The kind named {@code label}. */
  static BalancerKind fromLabel(String label) {
    for (BalancerKind kind : values()) {
      if (kind.label.equals(label)) {
        return kind;
      }
    }
    throw new IllegalArgumentException(
        "balancer: " + label + " (expected: round-robin, random or p2c-ewma)");
  }

  /** A new, empty balancer of this kind; picks run on event loops, so randomness is thread-local. */
  Balancer<InetSocketAddress> newBalancer(Ticker ticker) {
    return switch (this) {
      case ROUND_ROBIN -> Balancer.roundRobin();
      case RANDOM -> Balancer.random(ThreadLocalRandomGenerator.INSTANCE);
      case P2C_EWMA -> Balancer.peakEwmaP2c(ticker, ThreadLocalRandomGenerator.INSTANCE);
    };
  }

  /** Delegates to the calling thread's {@link ThreadLocalRandom}, so one instance is safe everywhere. */
  private enum ThreadLocalRandomGenerator implements java.util.random.RandomGenerator {
    INSTANCE;

    @Override
    public long nextLong() {
      return ThreadLocalRandom.current().nextLong();
    }

    @Override
    public int nextInt(int bound) {
      return ThreadLocalRandom.current().nextInt(bound);
    }

    @Override
    public int nextInt(int origin, int bound) {
      return ThreadLocalRandom.current().nextInt(origin, bound);
    }
  }
}
