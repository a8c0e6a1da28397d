package dev.portage.proxy.service;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;

/**
 * The desired state of one service port: where to listen, the endpoints to spread connections over,
 * how to balance, and client-IP affinity. Immutable.
 *
 * @param name unique among the services of one state ({@code web}, {@code default/web:http})
 * @param listen the listener address; port 0 binds an ephemeral port
 * @param endpoints distinct backend addresses, in order
 * @param balancer how connections are spread
 * @param affinityTimeout client-IP affinity time to live, or null without affinity
 * @param authority the Destination API authority the endpoints come from, or null
 */
record ServiceSpec(
    String name,
    InetSocketAddress listen,
    List<InetSocketAddress> endpoints,
    BalancerKind balancer,
    Duration affinityTimeout,
    String authority) {

  /** kube-proxy's default ClientIP affinity timeout ({@code timeoutSeconds: 10800}). */
  static final Duration DEFAULT_AFFINITY_TIMEOUT = Duration.ofSeconds(10800);

  ServiceSpec {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(listen, "listen");
    Objects.requireNonNull(balancer, "balancer");
    if (name.isEmpty()) {
      throw new IllegalArgumentException("name: \"\" (expected: non-empty)");
    }
    endpoints = List.copyOf(endpoints);
    if (new HashSet<>(endpoints).size() != endpoints.size()) {
      throw new IllegalArgumentException("endpoints: " + endpoints + " (expected: no duplicates)");
    }
    if (affinityTimeout != null && (affinityTimeout.isNegative() || affinityTimeout.isZero())) {
      throw new IllegalArgumentException("affinityTimeout: " + affinityTimeout + " (expected: > 0)");
    }
  }

  /** A round-robin service without affinity. */
  static ServiceSpec of(String name, InetSocketAddress listen, List<InetSocketAddress> endpoints) {
    return new ServiceSpec(name, listen, endpoints, BalancerKind.ROUND_ROBIN, null, null);
  }

  /** This spec with other endpoints. */
  ServiceSpec withEndpoints(List<InetSocketAddress> newEndpoints) {
    return new ServiceSpec(name, listen, newEndpoints, balancer, affinityTimeout, authority);
  }
}
