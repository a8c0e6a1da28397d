package dev.portage.bench.soak;

import java.util.Set;

/** The faults the soak injects, each with the request paths it may legitimately break. */
enum FaultKind {
  KILL_AGENT("kill -9 agent", Set.of(Traffic.TUNNEL)),
  KILL_SERVER("kill -9 server replica", Set.of(Traffic.TUNNEL)),
  KILL_CONTROL_PLANE("kill -9 control plane", Set.of(Traffic.SERVICE_PROXY, Traffic.SIDECAR)),
  STOP_HUB_UPSTREAM("stop hub upstream", Set.of(Traffic.HUB));

  final String label;
  final Set<Traffic> affects;

  FaultKind(String label, Set<Traffic> affects) {
    this.label = label;
    this.affects = affects;
  }
}
