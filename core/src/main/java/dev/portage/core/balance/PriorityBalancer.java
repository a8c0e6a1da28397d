package dev.portage.core.balance;

import java.util.List;

/** The first ready endpoint in configured order: a primary with fallbacks. Stateless apart from the set. */
final class PriorityBalancer<T> extends SnapshotBalancer<T> {

  @Override
  Pick<T> select(List<Endpoint<T>> snapshot) {
    for (Endpoint<T> e : snapshot) {
      if (e.isReady()) {
        return countingPick(e);
      }
    }
    return null;
  }
}
