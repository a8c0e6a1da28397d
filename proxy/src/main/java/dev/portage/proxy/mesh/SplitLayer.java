package dev.portage.proxy.mesh;

import dev.portage.api.linkerd.destination.WeightedDst;
import java.util.List;
import java.util.random.RandomGenerator;

/**
 * Split layer: with {@code dst_overrides} in the profile, sends each attempt to one of their
 * authorities at random in proportion to the weights (weight 0 was dropped with the profile);
 * without, to the request's own authority.
 */
final class SplitLayer implements Service {

  private final RandomGenerator random;
  private final Service inner;

  /** @param random must be thread-safe */
  SplitLayer(RandomGenerator random, Service inner) {
    this.random = random;
    this.inner = inner;
  }

  @Override
  public void call(ProxyRequest r, Reply reply) {
    r.concreteAuthority = choose(r.profile.overrides(), r.authority);
    inner.call(r, reply);
  }

  private String choose(List<WeightedDst> overrides, String own) {
    if (overrides.isEmpty()) {
      return own;
    }
    long total = 0;
    for (WeightedDst d : overrides) {
      total += Integer.toUnsignedLong(d.getWeight());
    }
    long x = random.nextLong(total);
    for (WeightedDst d : overrides) {
      x -= Integer.toUnsignedLong(d.getWeight());
      if (x < 0) {
        return d.getAuthority();
      }
    }
    return overrides.get(overrides.size() - 1).getAuthority();
  }
}
