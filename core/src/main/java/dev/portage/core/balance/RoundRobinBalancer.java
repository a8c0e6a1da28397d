package dev.portage.core.balance;

import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Round robin as YurtHub does it: start at the position after the last pick, walk forward once
 * around, take the first ready endpoint. The position is one atomic counter: a pick claims a slot
 * with {@code getAndIncrement} and, when it had to skip unready endpoints, moves the counter past
 * its choice with a single CAS (losing that race to another picker is harmless).
 */
final class RoundRobinBalancer<T> extends SnapshotBalancer<T> {

  // A long so the modulo never jumps at int overflow.
  private final AtomicLong next = new AtomicLong();

  @Override
  Pick<T> select(List<Endpoint<T>> snapshot) {
    int n = snapshot.size();
    long claimed = next.getAndIncrement();
    int start = (int) Math.floorMod(claimed, (long) n);
    for (int step = 0; step < n; step++) {
      Endpoint<T> e = snapshot.get((start + step) % n);
      if (e.isReady()) {
        if (step > 0) {
          next.compareAndSet(claimed + 1, claimed + step + 1);
        }
        return countingPick(e);
      }
    }
    return null;
  }
}
