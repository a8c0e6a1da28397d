package dev.portage.core.balance;

import java.util.List;
import java.util.Objects;
import java.util.random.RandomGenerator;

/** A uniformly random ready endpoint. Lock-free if the random generator is. */
final class RandomBalancer<T> extends SnapshotBalancer<T> {

  private final RandomGenerator random;

  RandomBalancer(RandomGenerator random) {
    this.random = Objects.requireNonNull(random, "random");
  }

  @Override
  Pick<T> select(List<Endpoint<T>> snapshot) {
    int i = ReadySampler.readyIndex(snapshot, random, -1);
    return i < 0 ? null : countingPick(snapshot.get(i));
  }
}
