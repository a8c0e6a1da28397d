package dev.portage.control.destination;

import com.fasterxml.jackson.databind.JsonNode;
import dev.portage.api.linkerd.destination.WeightedAddr;
import dev.portage.api.linkerd.net.TcpAddress;
import dev.portage.control.store.Resource;
import dev.portage.control.store.ResourceKey;
import dev.portage.control.store.ResourceStore;
import java.util.HexFormat;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Computes the {@link EndpointSnapshot} of an authority from the Service in the store and its
 * EndpointSlices.
 *
 * <p>Port mapping: the Service port whose {@code port} equals the requested port gives a port name;
 * each slice's {@code ports[]} entry with that name (TCP) gives the endpoint port of that slice's
 * addresses (a slice without it contributes nothing). When the Service has no such port, the
 * requested port is used as the endpoint port, as Linkerd does for headless services. Endpoints whose
 * {@code conditions.ready} is false are left out (absent counts as ready, per the EndpointSlice API).
 * Used on the destination server's serial executor only.
 */
final class EndpointResolver {

  private static final Logger log = LoggerFactory.getLogger(EndpointResolver.class);

  private final ResourceStore store;
  private final SliceIndex slices;
  private final int weight;

  EndpointResolver(ResourceStore store, SliceIndex slices, int weight) {
    this.store = store;
    this.slices = slices;
    this.weight = weight;
  }

  EndpointSnapshot resolve(Authority authority) {
    ServiceRef ref = authority.service();
    Optional<Resource> svc = store.get(new ResourceKey(KubeKinds.SERVICE, ref.namespace(), ref.name()));
    if (svc.isEmpty()) {
      return EndpointSnapshot.NOT_FOUND;
    }
    String portName = null;
    for (JsonNode p : svc.get().spec().path("ports")) {
      if (p.path("port").asInt(-1) == authority.port() && isTcp(p)) {
        portName = p.path("name").asText("");
        break;
      }
    }
    TreeMap<String, WeightedAddr> addrs = new TreeMap<>();
    for (Resource slice : slices.slicesOf(ref)) {
      int port = portName == null ? authority.port() : slicePort(slice.body(), portName);
      if (port <= 0) {
        continue;
      }
      for (JsonNode ep : slice.body().path("endpoints")) {
        JsonNode ready = ep.path("conditions").path("ready");
        if (ready.isBoolean() && !ready.booleanValue()) {
          continue;
        }
        if (authority.hostname() != null && !authority.hostname().equals(ep.path("hostname").asText(""))) {
          continue;
        }
        Map<String, String> labels = new TreeMap<>();
        JsonNode target = ep.path("targetRef");
        if ("Pod".equals(target.path("kind").asText()) && !target.path("name").asText("").isEmpty()) {
          labels.put("pod", target.path("name").asText());
        }
        String zone = ep.path("zone").asText("");
        if (!zone.isEmpty()) {
          labels.put("zone", zone);
        }
        for (JsonNode a : ep.path("addresses")) {
          TcpAddress addr = ProtoAddress.of(a.asText(""), port);
          if (addr == null) {
            log.debug("slice {}: {} is not an IP address, skipped", slice.key(), a);
            continue;
          }
          // Keyed by the encoding so that two spellings of one IPv6 address are one endpoint.
          addrs.put(
              HexFormat.of().formatHex(addr.toByteArray()),
              WeightedAddr.newBuilder().setAddr(addr).setWeight(weight).putAllMetricLabels(labels).build());
        }
      }
    }
    return new EndpointSnapshot(true, addrs, Map.of("namespace", ref.namespace(), "service", ref.name()));
  }

  private static int slicePort(JsonNode slice, String name) {
    for (JsonNode p : slice.path("ports")) {
      if (p.path("name").asText("").equals(name) && isTcp(p)) {
        return p.path("port").asInt(-1);
      }
    }
    return -1;
  }

  private static boolean isTcp(JsonNode port) {
    return port.path("protocol").asText("TCP").equals("TCP");
  }
}
