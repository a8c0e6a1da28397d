package dev.portage.proxy.service.nftables;

import dev.portage.proxy.service.model.Protocol;
import dev.portage.proxy.service.model.ServiceEndpoint;
import dev.portage.proxy.service.model.ServicePort;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A UDP flow whose conntrack entry must go: sent to a Service address ({@code serviceIp:port}, or
 * any address on NodePort {@code port} when {@code serviceIp} is null) and translated to an endpoint
 * that no longer serves that Service port. Immutable.
 */
record StaleUdpFlow(String serviceIp, int port, String endpointIp, int endpointPort) {

  /**
   * The flows to delete after going from {@code before} to {@code after}: for every UDP Service port
   * of {@code before}, its serving endpoints that {@code after} no longer has as serving (all of them
   * when the port is gone), on each of its Service addresses and its NodePort.
   */
  static List<StaleUdpFlow> between(Map<String, ServicePort> before, Map<String, ServicePort> after) {
    List<StaleUdpFlow> stale = new ArrayList<>();
    before.forEach((id, old) -> {
      if (old.protocol() != Protocol.UDP) {
        return;
      }
      ServicePort now = after.get(id);
      if (now == old) {
        return;
      }
      Set<String> keep = new HashSet<>();
      if (now != null) {
        for (ServiceEndpoint endpoint : now.servingEndpoints()) {
          keep.add(endpoint.address());
        }
      }
      for (ServiceEndpoint endpoint : old.servingEndpoints()) {
        if (keep.contains(endpoint.address())) {
          continue;
        }
        for (String ip : old.serviceIPs()) {
          stale.add(new StaleUdpFlow(ip, old.port(), endpoint.ip(), endpoint.port()));
        }
        if (old.nodePort() != 0) {
          stale.add(new StaleUdpFlow(null, old.nodePort(), endpoint.ip(), endpoint.port()));
        }
      }
    });
    return stale;
  }
}
