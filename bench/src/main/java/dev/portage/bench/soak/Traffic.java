package dev.portage.bench.soak;

/** The request paths the soak drives, one counter set each. */
enum Traffic {
  /** HTTP CONNECT through a tunnel server replica and an agent to a TCP echo, checksum verified. */
  TUNNEL("tunnel (CONNECT echo)"),
  /** HTTP/1.1 GETs through the L4 service proxy, endpoints from the Destination API. */
  SERVICE_PROXY("service proxy (HTTP via L4)"),
  /** HTTP/1.1 GETs through the L7 sidecar, a plain service and a traffic-split apex service. */
  SIDECAR("sidecar (HTTP L7)"),
  /** kubelet-style pod GETs and lists through the edge hub. */
  HUB("hub (pod get/list)");

  final String label;

  Traffic(String label) {
    this.label = label;
  }
}
