package dev.portage.control.destination;

import dev.portage.api.linkerd.destination.AddrSet;
import dev.portage.api.linkerd.destination.NoEndpoints;
import dev.portage.api.linkerd.destination.Update;
import dev.portage.api.linkerd.destination.WeightedAddr;
import dev.portage.api.linkerd.destination.WeightedAddrSet;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * The ready endpoints of one service port at one moment, keyed by their encoded address, and how to tell a
 * client that had another snapshot about it ({@link #updatesSince}). Immutable.
 *
 * @param exists whether the Service exists
 * @param addrs the ready endpoints (empty when the service does not exist)
 * @param setLabels labels of the whole set ({@code WeightedAddrSet.metric_labels})
 */
record EndpointSnapshot(boolean exists, SortedMap<String, WeightedAddr> addrs, Map<String, String> setLabels) {

  static final EndpointSnapshot NOT_FOUND = new EndpointSnapshot(false, new TreeMap<>(), Map.of());

  EndpointSnapshot {
    addrs = new TreeMap<>(addrs);
    setLabels = Map.copyOf(setLabels);
  }

  /**
   * The updates that take a client from {@code previous} (null: nothing sent yet) to this snapshot.
   * The first answer is always one message: {@code add} with everything, or {@code no_endpoints}.
   * Later: {@code add} for new or changed endpoints, then {@code remove} for gone ones (so a client
   * never sees an empty set in between), or {@code no_endpoints} when the set becomes empty or the
   * service goes away.
   */
  List<Update> updatesSince(EndpointSnapshot previous) {
    if (addrs.isEmpty()) {
      boolean sameEmptiness = previous != null && previous.addrs.isEmpty() && previous.exists == exists;
      return sameEmptiness ? List.of() : List.of(noEndpoints(exists));
    }
    if (previous == null || previous.addrs.isEmpty()) {
      return List.of(add(new ArrayList<>(addrs.values())));
    }
    List<Update> out = new ArrayList<>(2);
    List<WeightedAddr> added = new ArrayList<>();
    for (Map.Entry<String, WeightedAddr> e : addrs.entrySet()) {
      if (!e.getValue().equals(previous.addrs.get(e.getKey()))) {
        added.add(e.getValue());
      }
    }
    if (!added.isEmpty() || !setLabels.equals(previous.setLabels)) {
      out.add(add(added.isEmpty() ? new ArrayList<>(addrs.values()) : added));
    }
    AddrSet.Builder removed = AddrSet.newBuilder();
    for (Map.Entry<String, WeightedAddr> e : previous.addrs.entrySet()) {
      if (!addrs.containsKey(e.getKey())) {
        removed.addAddrs(e.getValue().getAddr());
      }
    }
    if (removed.getAddrsCount() > 0) {
      out.add(Update.newBuilder().setRemove(removed).build());
    }
    return out;
  }

  private Update add(List<WeightedAddr> list) {
    return Update.newBuilder()
        .setAdd(WeightedAddrSet.newBuilder().addAllAddrs(list).putAllMetricLabels(setLabels))
        .build();
  }

  private static Update noEndpoints(boolean exists) {
    return Update.newBuilder().setNoEndpoints(NoEndpoints.newBuilder().setExists(exists)).build();
  }
}
