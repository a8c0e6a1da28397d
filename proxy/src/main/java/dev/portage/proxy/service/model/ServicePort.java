package dev.portage.proxy.service.model;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * One port of one Service with everything a proxy needs to route to it: the Service's addresses
 * (ClusterIP, NodePort, externalIPs, LoadBalancer ingress IPs), its traffic policies and affinity,
 * and its endpoints with their conditions. kube-proxy's {@code ServicePort} plus its endpoints.
 * Immutable; equal ports produce equal rules, so a proxy may skip re-rendering an unchanged one.
 *
 * @param namespace the Service's namespace
 * @param name the Service's name
 * @param portName the port's name ({@code ""} for a Service's single unnamed port)
 * @param protocol the port's protocol
 * @param clusterIP the IPv4 ClusterIP, or null when the Service has none (then only its other
 *     addresses are served)
 * @param port the Service port
 * @param nodePort the NodePort, or 0
 * @param externalIPs {@code spec.externalIPs} (IPv4 only)
 * @param loadBalancerIPs {@code status.loadBalancer.ingress[].ip} (IPv4 only)
 * @param affinityTimeout ClientIP session affinity time, or null without affinity
 * @param internalLocal {@code internalTrafficPolicy: Local}
 * @param externalLocal {@code externalTrafficPolicy: Local} (applies to NodePort, external and LB IPs)
 * @param endpoints the endpoints of every slice of the Service carrying this port, without duplicates
 */
public record ServicePort(
    String namespace,
    String name,
    String portName,
    Protocol protocol,
    String clusterIP,
    int port,
    int nodePort,
    List<String> externalIPs,
    List<String> loadBalancerIPs,
    Duration affinityTimeout,
    boolean internalLocal,
    boolean externalLocal,
    List<ServiceEndpoint> endpoints) {

  public ServicePort {
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(portName, "portName");
    Objects.requireNonNull(protocol, "protocol");
    if (port < 1 || port > 65535) {
      throw new IllegalArgumentException("port: " + port + " (expected: 1..65535)");
    }
    if (nodePort < 0 || nodePort > 65535) {
      throw new IllegalArgumentException("nodePort: " + nodePort + " (expected: 0..65535)");
    }
    externalIPs = List.copyOf(externalIPs);
    loadBalancerIPs = List.copyOf(loadBalancerIPs);
    endpoints = List.copyOf(endpoints);
    if (affinityTimeout != null && (affinityTimeout.isNegative() || affinityTimeout.isZero())) {
      throw new IllegalArgumentException("affinityTimeout: " + affinityTimeout + " (expected: > 0)");
    }
  }

  /**
   * kube-proxy's ServicePortName: {@code namespace/name:portName}, or {@code namespace/name} for an
   * unnamed port. Unique among the ports of a snapshot.
   */
  public String id() {
    return namespace + "/" + name + (portName.isEmpty() ? "" : ":" + portName);
  }

  /** The base of kube-proxy's nftables chain names: {@code namespace/name/protocol/portName}. */
  public String chainBase() {
    return namespace + "/" + name + "/" + protocol.nft() + "/" + portName;
  }

  /** Whether any address other than the ClusterIP leads here (NodePort, external or LB IPs). */
  public boolean hasExternalAddresses() {
    return nodePort != 0 || !externalIPs.isEmpty() || !loadBalancerIPs.isEmpty();
  }

  /**
   * The endpoints traffic with Cluster policy goes to, as kube-proxy picks them: the ready ones;
   * if none is ready anywhere, the serving-and-terminating ones (so connections still land while a
   * rollout replaces the last pods).
   */
  public List<ServiceEndpoint> clusterEndpoints() {
    return usable(endpoints);
  }

  /** The endpoints on this node traffic with Local policy goes to, picked the same way. */
  public List<ServiceEndpoint> localEndpoints() {
    List<ServiceEndpoint> local = new ArrayList<>();
    for (ServiceEndpoint endpoint : endpoints) {
      if (endpoint.local()) {
        local.add(endpoint);
      }
    }
    return usable(local);
  }

  /** The endpoints in-cluster traffic to the ClusterIP uses under {@code internalTrafficPolicy}. */
  public List<ServiceEndpoint> internalEndpoints() {
    return internalLocal ? localEndpoints() : clusterEndpoints();
  }

  /** The endpoints external traffic uses under {@code externalTrafficPolicy}. */
  public List<ServiceEndpoint> externalEndpoints() {
    return externalLocal ? localEndpoints() : clusterEndpoints();
  }

  /** The endpoints a UDP flow may still be talking to: every serving one (kube-proxy's conntrack rule). */
  public List<ServiceEndpoint> servingEndpoints() {
    List<ServiceEndpoint> serving = new ArrayList<>();
    for (ServiceEndpoint endpoint : endpoints) {
      if (endpoint.serving()) {
        serving.add(endpoint);
      }
    }
    return serving;
  }

  /** Every address the Service port answers on besides NodePorts: ClusterIP, external IPs, LB IPs. */
  public List<String> serviceIPs() {
    List<String> ips = new ArrayList<>();
    if (clusterIP != null) {
      ips.add(clusterIP);
    }
    ips.addAll(externalIPs);
    ips.addAll(loadBalancerIPs);
    return ips;
  }

  private static List<ServiceEndpoint> usable(List<ServiceEndpoint> candidates) {
    List<ServiceEndpoint> ready = new ArrayList<>();
    for (ServiceEndpoint endpoint : candidates) {
      if (endpoint.ready()) {
        ready.add(endpoint);
      }
    }
    if (!ready.isEmpty()) {
      return ready;
    }
    List<ServiceEndpoint> terminating = new ArrayList<>();
    for (ServiceEndpoint endpoint : candidates) {
      if (endpoint.servingTerminating()) {
        terminating.add(endpoint);
      }
    }
    return terminating;
  }
}
