package dev.portage.core.balance;

import java.util.List;

/**
 * Smooth weighted round robin (nginx): on each pick every ready endpoint's current weight grows by
 * its weight, the largest wins (first in order on a tie) and loses the total. Over a cycle each
 * endpoint is chosen in proportion to its weight, interleaved rather than in bursts.
 *
 * <p>The current weights belong to one snapshot; a new snapshot starts them at 0, as nginx does on a
 * reload. Picks serialise on a lock held only for the arithmetic.
 */
final class WeightedRoundRobinBalancer<T> extends SnapshotBalancer<T> {

  private List<Endpoint<T>> weightsFor; // guarded by this
  private long[] current; // guarded by this

  @Override
  Pick<T> select(List<Endpoint<T>> snapshot) {
    Endpoint<T> chosen;
    synchronized (this) {
      if (weightsFor != snapshot) {
        weightsFor = snapshot;
        current = new long[snapshot.size()];
      }
      long total = 0;
      int best = -1;
      for (int i = 0; i < current.length; i++) {
        Endpoint<T> e = snapshot.get(i);
        if (!e.isReady()) {
          continue;
        }
        current[i] += e.weight();
        total += e.weight();
        if (best < 0 || current[i] > current[best]) {
          best = i;
        }
      }
      if (best < 0) {
        return null;
      }
      current[best] -= total;
      chosen = snapshot.get(best);
    }
    return countingPick(chosen);
  }
}
