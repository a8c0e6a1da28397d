package dev.portage.proxy.service;

import dev.portage.proxy.service.model.Protocol;
import dev.portage.proxy.service.model.ServiceEndpoint;
import dev.portage.proxy.service.model.ServicePort;
import io.fabric8.kubernetes.api.model.LoadBalancerIngress;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceSpec;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointConditions;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointPort;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.netty.util.NetUtil;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads one Kubernetes Service and its EndpointSlices the way kube-proxy does, into {@link
 * ServicePort}s: one per Service port, with the Service's IPv4 addresses (ClusterIP, NodePort,
 * externalIPs, LoadBalancer ingress IPs), policies, affinity, and the IPv4 endpoints of the slices
 * carrying a port of the same name and protocol. Stateless.
 */
final class ServicePorts {

  static final String SERVICE_NAME_LABEL = "kubernetes.io/service-name";
  /** Services labelled with it belong to another proxy (kube-proxy's selector). */
  static final String SERVICE_PROXY_NAME_LABEL = "service.kubernetes.io/service-proxy-name";
  static final String TRIGGER_TIME_ANNOTATION = "endpoints.kubernetes.io/last-change-trigger-time";

  private ServicePorts() {}

  /**
   * The ports {@code service} serves, by id; empty for Services kube-proxy skips (ExternalName,
   * headless, another proxy's).
   *
   * @param hostname this node's name: endpoints with this {@code nodeName} are local
   */
  static Map<String, ServicePort> of(Service service, List<EndpointSlice> slices, String hostname) {
    Map<String, ServicePort> ports = new LinkedHashMap<>();
    ServiceSpec spec = service.getSpec();
    Map<String, String> labels = service.getMetadata().getLabels();
    if (spec == null || spec.getPorts() == null || "ExternalName".equals(spec.getType())
        || "None".equals(spec.getClusterIP())
        || (labels != null && labels.containsKey(SERVICE_PROXY_NAME_LABEL))) {
      return ports;
    }
    String namespace = service.getMetadata().getNamespace();
    String name = service.getMetadata().getName();
    String clusterIP = firstIpv4(spec.getClusterIPs(), spec.getClusterIP());
    List<String> externalIPs = ipv4(spec.getExternalIPs());
    List<String> lbIPs = new ArrayList<>();
    if (service.getStatus() != null && service.getStatus().getLoadBalancer() != null
        && service.getStatus().getLoadBalancer().getIngress() != null) {
      for (LoadBalancerIngress ingress : service.getStatus().getLoadBalancer().getIngress()) {
        // ipMode Proxy: the load balancer delivers to the node, not to the IP; kube-proxy skips it.
        if (ingress.getIp() != null && isIpv4(ingress.getIp()) && !"Proxy".equals(ingress.getIpMode())) {
          lbIPs.add(ingress.getIp());
        }
      }
    }
    Duration affinity = affinity(spec);
    boolean internalLocal = "Local".equals(spec.getInternalTrafficPolicy());
    boolean externalLocal = "Local".equals(spec.getExternalTrafficPolicy());
    boolean nodePorts = "NodePort".equals(spec.getType()) || "LoadBalancer".equals(spec.getType());
    for (io.fabric8.kubernetes.api.model.ServicePort port : spec.getPorts()) {
      Protocol protocol;
      try {
        protocol = Protocol.of(port.getProtocol());
      } catch (IllegalArgumentException e) {
        continue;
      }
      if (port.getPort() == null) {
        continue;
      }
      String portName = port.getName() == null ? "" : port.getName();
      int nodePort = nodePorts && port.getNodePort() != null ? port.getNodePort() : 0;
      ServicePort sp = new ServicePort(namespace, name, portName, protocol, clusterIP, port.getPort(),
          nodePort, externalIPs, lbIPs, affinity, internalLocal, externalLocal,
          endpoints(slices, portName, protocol, hostname));
      ports.put(sp.id(), sp);
    }
    return ports;
  }

  /** The latest {@code last-change-trigger-time} among {@code slices}, or null. */
  static Instant triggerTime(List<EndpointSlice> slices) {
    Instant latest = null;
    for (EndpointSlice slice : slices) {
      Map<String, String> annotations = slice.getMetadata().getAnnotations();
      String value = annotations == null ? null : annotations.get(TRIGGER_TIME_ANNOTATION);
      if (value == null) {
        continue;
      }
      try {
        Instant t = Instant.parse(value);
        if (latest == null || t.isAfter(latest)) {
          latest = t;
        }
      } catch (DateTimeParseException e) {
        // a malformed annotation only costs the latency metric
      }
    }
    return latest;
  }

  private static List<ServiceEndpoint> endpoints(
      List<EndpointSlice> slices, String portName, Protocol protocol, String hostname) {
    Map<String, ServiceEndpoint> endpoints = new LinkedHashMap<>();
    for (EndpointSlice slice : slices) {
      if (!"IPv4".equals(slice.getAddressType()) || slice.getPorts() == null || slice.getEndpoints() == null) {
        continue;
      }
      Integer number = null;
      for (EndpointPort port : slice.getPorts()) {
        String name = port.getName() == null ? "" : port.getName();
        if (name.equals(portName) && port.getPort() != null && protocolOf(port) == protocol) {
          number = port.getPort();
        }
      }
      if (number == null) {
        continue;
      }
      for (Endpoint endpoint : slice.getEndpoints()) {
        EndpointConditions c = endpoint.getConditions();
        // The API's rules: a missing ready means ready, a missing serving means "as ready".
        boolean ready = c == null || c.getReady() == null || c.getReady();
        boolean serving = c == null || c.getServing() == null ? ready : c.getServing();
        boolean terminating = c != null && Boolean.TRUE.equals(c.getTerminating());
        boolean local = hostname != null && hostname.equals(endpoint.getNodeName());
        if (endpoint.getAddresses() == null || endpoint.getAddresses().isEmpty()) {
          continue;
        }
        String address = endpoint.getAddresses().get(0); // kube-proxy uses the first address
        if (!isIpv4(address)) {
          continue;
        }
        endpoints.putIfAbsent(address + ":" + number,
            new ServiceEndpoint(address, number, ready, serving, terminating, local));
      }
    }
    return List.copyOf(endpoints.values());
  }

  private static Protocol protocolOf(EndpointPort port) {
    try {
      return Protocol.of(port.getProtocol());
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  private static Duration affinity(ServiceSpec spec) {
    if (!"ClientIP".equals(spec.getSessionAffinity())) {
      return null;
    }
    var config = spec.getSessionAffinityConfig();
    Integer seconds = config == null || config.getClientIP() == null
        ? null : config.getClientIP().getTimeoutSeconds();
    return seconds == null || seconds <= 0
        ? dev.portage.proxy.service.ServiceSpec.DEFAULT_AFFINITY_TIMEOUT
        : Duration.ofSeconds(seconds);
  }

  private static String firstIpv4(List<String> ips, String ip) {
    if (ips != null) {
      for (String candidate : ips) {
        if (isIpv4(candidate)) {
          return candidate;
        }
      }
    }
    return ip != null && isIpv4(ip) ? ip : null;
  }

  private static List<String> ipv4(List<String> ips) {
    List<String> out = new ArrayList<>();
    if (ips != null) {
      for (String ip : ips) {
        if (isIpv4(ip)) {
          out.add(ip);
        }
      }
    }
    return out;
  }

  static boolean isIpv4(String text) {
    return text != null && NetUtil.isValidIpV4Address(text);
  }
}
