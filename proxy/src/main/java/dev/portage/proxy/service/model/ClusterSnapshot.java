package dev.portage.proxy.service.model;

import java.time.Instant;
import java.util.Map;
import java.util.Objects;

/**
 * What a proxy should serve at one moment: every Service port by {@link ServicePort#id()}, and for
 * the ports whose endpoints changed, when that change was triggered (the EndpointSlice annotation
 * {@code endpoints.kubernetes.io/last-change-trigger-time}) for kube-proxy's network programming
 * latency. Immutable.
 *
 * @param ports Service ports by id
 * @param changeTriggers trigger times by port id; a port may be missing
 */
public record ClusterSnapshot(Map<String, ServicePort> ports, Map<String, Instant> changeTriggers) {

  public ClusterSnapshot {
    ports = Map.copyOf(Objects.requireNonNull(ports, "ports"));
    changeTriggers = Map.copyOf(Objects.requireNonNull(changeTriggers, "changeTriggers"));
  }

  /** A snapshot of {@code ports} without trigger times. */
  public static ClusterSnapshot of(Map<String, ServicePort> ports) {
    return new ClusterSnapshot(ports, Map.of());
  }
}
