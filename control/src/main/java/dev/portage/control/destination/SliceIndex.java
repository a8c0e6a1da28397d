package dev.portage.control.destination;

import dev.portage.control.store.Resource;
import dev.portage.control.store.ResourceKey;
import dev.portage.control.store.StoreEvent;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * EndpointSlices grouped by the Service they belong to (label {@code kubernetes.io/service-name}),
 * kept from store events. It remembers each slice's last service so that relabelling or deleting a
 * slice tells both the old and the new service. Owned by the destination server's serial executor.
 */
final class SliceIndex {

  private final Map<ResourceKey, Resource> slices = new HashMap<>();
  private final Map<ServiceRef, Map<ResourceKey, Resource>> byService = new HashMap<>();

  /** Applies one EndpointSlice event; returns the services whose slices changed. */
  Set<ServiceRef> apply(StoreEvent e) {
    Resource r = e.resource();
    Resource current = slices.get(r.key());
    Set<ServiceRef> affected = new HashSet<>(2);
    if (e.type() == StoreEvent.Type.DELETED) {
      if (current != null && current.revision() <= e.revision()) {
        remove(current, affected);
      }
    } else if (current == null || current.revision() <= r.revision()) {
      if (current != null) {
        remove(current, affected);
      }
      add(r, affected);
    }
    return affected;
  }

  /** Replaces everything with a fresh listing; returns every service that had or has slices. */
  Set<ServiceRef> reset(List<Resource> listing) {
    Set<ServiceRef> affected = new HashSet<>(byService.keySet());
    slices.clear();
    byService.clear();
    for (Resource r : listing) {
      add(r, affected);
    }
    return affected;
  }

  Collection<Resource> slicesOf(ServiceRef service) {
    Map<ResourceKey, Resource> m = byService.get(service);
    return m == null ? List.of() : m.values();
  }

  private void add(Resource r, Set<ServiceRef> affected) {
    slices.put(r.key(), r);
    ServiceRef s = serviceOf(r);
    if (s != null) {
      byService.computeIfAbsent(s, k -> new HashMap<>()).put(r.key(), r);
      affected.add(s);
    }
  }

  private void remove(Resource r, Set<ServiceRef> affected) {
    slices.remove(r.key());
    ServiceRef s = serviceOf(r);
    if (s != null) {
      Map<ResourceKey, Resource> m = byService.get(s);
      if (m != null) {
        m.remove(r.key());
        if (m.isEmpty()) {
          byService.remove(s);
        }
      }
      affected.add(s);
    }
  }

  private static ServiceRef serviceOf(Resource r) {
    String name = r.body().path("metadata").path("labels").path(KubeKinds.SERVICE_NAME_LABEL).asText("");
    return name.isEmpty() ? null : new ServiceRef(r.key().namespace(), name);
  }
}
