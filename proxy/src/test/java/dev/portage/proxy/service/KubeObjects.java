package dev.portage.proxy.service;

import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceFluent;

/** Services and EndpointSlices as a cluster would hold them, for tests. */
final class KubeObjects {

  private KubeObjects() {}

  /** A ClusterIP Service {@code default/name} with one port {@code portName} of {@code protocol}. */
  static ServiceBuilder service(String name, String clusterIp, String portName, String protocol, int port) {
    return new ServiceBuilder()
        .withNewMetadata().withName(name).withNamespace("default").endMetadata()
        .withNewSpec()
        .withType("ClusterIP")
        .withClusterIP(clusterIp)
        .addNewPort().withName(portName).withPort(port).withProtocol(protocol).endPort()
        .endSpec();
  }

  /** The same with {@code type: NodePort} and the given NodePort. */
  static Service nodePortService(String name, String clusterIp, String portName, String protocol, int port, int nodePort) {
    return service(name, clusterIp, portName, protocol, port)
        .editSpec().withType("NodePort").editFirstPort().withNodePort(nodePort).endPort().endSpec()
        .build();
  }

  /** A slice of Service {@code service} with port {@code portName}; add endpoints with {@link #endpoint}. */
  static EndpointSliceBuilder slice(String name, String service, String portName, String protocol, int port) {
    return new EndpointSliceBuilder()
        .withNewMetadata().withName(name).withNamespace("default")
        .addToLabels(ServicePorts.SERVICE_NAME_LABEL, service).endMetadata()
        .withAddressType("IPv4")
        .addNewPort().withName(portName).withPort(port).withProtocol(protocol).endPort();
  }

  /** Adds a ready endpoint on node {@code node}. */
  static EndpointSliceBuilder endpoint(EndpointSliceBuilder slice, String ip, String node) {
    return conditions(slice, ip, node, true, true, false);
  }

  /** Adds an endpoint with explicit conditions. */
  static EndpointSliceBuilder conditions(
      EndpointSliceBuilder slice, String ip, String node, boolean ready, boolean serving, boolean terminating) {
    EndpointSliceFluent<EndpointSliceBuilder>.EndpointsNested<EndpointSliceBuilder> e = slice.addNewEndpoint();
    return e.withAddresses(ip).withNodeName(node)
        .withNewConditions().withReady(ready).withServing(serving).withTerminating(terminating).endConditions()
        .endEndpoint();
  }

  /**
   * Two Services on port 80: {@code web-a} (10.96.0.10, NodePort 30080) over 10.244.0.11 and
   * 10.244.0.12 (on {@code nodeA}, {@code nodeB}) port 8080, {@code web-b} (10.96.0.20) over
   * 10.244.0.21:9090.
   */
  static void createTwoWebServices(io.fabric8.kubernetes.client.KubernetesClient client, String nodeA, String nodeB) {
    client.services().resource(nodePortService("web-a", "10.96.0.10", "http", "TCP", 80, 30080)).create();
    client.services().resource(service("web-b", "10.96.0.20", "http", "TCP", 80).build()).create();
    client.discovery().v1().endpointSlices().resource(
        endpoint(endpoint(slice("web-a-1", "web-a", "http", "TCP", 8080), "10.244.0.11", nodeA),
            "10.244.0.12", nodeB).build()).create();
    client.discovery().v1().endpointSlices().resource(
        endpoint(slice("web-b-1", "web-b", "http", "TCP", 9090), "10.244.0.21", nodeA).build()).create();
  }
}
