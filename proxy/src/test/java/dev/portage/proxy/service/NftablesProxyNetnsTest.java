package dev.portage.proxy.service;

import static dev.portage.proxy.service.KubeObjects.endpoint;
import static dev.portage.proxy.service.KubeObjects.slice;
import static org.assertj.core.api.Assertions.assertThat;

import dev.portage.core.testing.MockApiServerExtension;
import dev.portage.core.time.FakeClock;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The nftables data plane on a real kernel: pods in network namespaces, Services and EndpointSlices
 * in a Kubernetes API mock server, real TCP and UDP to ClusterIPs and NodePorts from a pod and from
 * the node while Services change.
 */
@ExtendWith(MockApiServerExtension.class)
class NftablesProxyNetnsTest {

  static KubernetesClient client;

  private final FakeClock clock = new FakeClock();
  private NetnsLab lab;
  private ServiceProxy proxy;
  private String a1;
  private String b1;
  private String client1;

  @BeforeEach
  void setUp() throws Exception {
    lab = NetnsLab.start();
    String[] pods = lab.webPods();
    a1 = pods[0];
    b1 = pods[2];
    client1 = pods[3];
    lab.udpServer(a1, 5353, "udp-a1");
    lab.udpServer(b1, 5353, "udp-b1");
    client.services().inAnyNamespace().delete();
    client.discovery().v1().endpointSlices().inAnyNamespace().delete();
  }

  @AfterEach
  void tearDown() {
    if (proxy != null) {
      proxy.close();
    }
    if (lab != null) {
      lab.close();
    }
  }

  private void startProxy() throws Exception {
    ServiceProxyConfig config = ServiceProxyConfig.builder()
        .kubernetes(true).proxyMode(ProxyMode.NFTABLES).hostname("node-1")
        .adminPort(-1).ioThreads(1).build();
    proxy = new ServiceProxy(
        config, new KubernetesServiceSource(client, false, "node-1"), clock.timeSource(), new PrometheusRegistry());
    proxy.start();
  }

  @Test
  void twoServicesOnOnePortEachReachTheirOwnEndpointsThroughClusterIpsAndNodePorts() throws Exception {
    KubeObjects.createTwoWebServices(client, "node-1", "node-2");
    startProxy();

    NetnsLab.awaitTrue(clock, () -> lab.tcpFrom(client1, "10.96.0.20", 80).equals("b1"));
    assertThat(lab.answers(client1, "10.96.0.10", 80, 30)).containsExactlyInAnyOrder("a1", "a2");
    assertThat(lab.answers(client1, "10.96.0.20", 80, 10)).containsExactly("b1");
    // From the node itself (nat-output) and through the NodePort on the node's address.
    assertThat(fromNode("10.96.0.20", 80)).isEqualTo("b1");
    assertThat(lab.answers(client1, NetnsLab.NODE_IP, 30080, 30)).containsExactlyInAnyOrder("a1", "a2");
    // Hairpin: a pod reaching itself through its Service (masqueraded, so it answers the node).
    assertThat(lab.tcpFrom(b1, "10.96.0.20", 80)).isEqualTo("b1");
    // A port no Service defines on a ClusterIP is refused, not blackholed.
    assertThat(lab.tcpFrom(client1, "10.96.0.10", 81)).startsWith("ERROR").contains("refused");

    // Endpoints change: only a2 is left for web-a.
    client.discovery().v1().endpointSlices().resource(
        endpoint(slice("web-a-1", "web-a", "http", "TCP", 8080), "10.244.0.12", "node-2").build()).update();
    NetnsLab.awaitTrue(clock, () -> lab.answers(client1, "10.96.0.10", 80, 10).equals(Set.of("a2")));

    // No endpoints: connections are refused (reject), not left to time out.
    client.discovery().v1().endpointSlices().inNamespace("default").withName("web-b-1").delete();
    NetnsLab.awaitTrue(clock, () -> lab.tcpFrom(client1, "10.96.0.20", 80).contains("refused"));

    // The Service goes away; its ClusterIP answers nothing of ours any more.
    client.services().inNamespace("default").withName("web-a").delete();
    NetnsLab.awaitTrue(clock, () -> !proxy.servicePorts().contains("default/web-a:http"));
    assertThat(lab.tcpFrom(client1, "10.96.0.10", 80)).startsWith("ERROR");
  }

  @Test
  void clientIpAffinityKeepsAClientOnOneEndpoint() throws Exception {
    client.services().resource(KubeObjects.service("sticky", "10.96.0.30", "http", "TCP", 80)
        .editSpec().withSessionAffinity("ClientIP")
        .withNewSessionAffinityConfig().withNewClientIP().withTimeoutSeconds(60).endClientIP().endSessionAffinityConfig()
        .endSpec().build()).create();
    client.discovery().v1().endpointSlices().resource(
        endpoint(endpoint(slice("sticky-1", "sticky", "http", "TCP", 8080), "10.244.0.11", "node-1"),
            "10.244.0.12", "node-1").build()).create();
    startProxy();

    NetnsLab.awaitTrue(clock, () -> lab.tcpFrom(client1, "10.96.0.30", 80).startsWith("a"));
    assertThat(lab.answers(client1, "10.96.0.30", 80, 12)).hasSize(1); // one client, one endpoint
  }

  @Test
  void udpReachesItsEndpointAndMovesWithItWhenTheEndpointChanges() throws Exception {
    client.services().resource(KubeObjects.service("dns", "10.96.0.53", "dns", "UDP", 53).build()).create();
    client.discovery().v1().endpointSlices().resource(
        endpoint(slice("dns-1", "dns", "dns", "UDP", 5353), "10.244.0.11", "node-1").build()).create();
    startProxy();

    NetnsLab.awaitTrue(clock, () -> lab.udpFrom(client1, "10.96.0.53", 53).equals("udp-a1"));
    try (DatagramSocket socket = new DatagramSocket(new InetSocketAddress("0.0.0.0", 0))) {
      socket.setSoTimeout(1000);
      // One flow from the node: its conntrack entry pins it to a1.
      assertThat(udp(socket)).isEqualTo("udp-a1");
      client.discovery().v1().endpointSlices().resource(
          endpoint(slice("dns-1", "dns", "dns", "UDP", 5353), "10.244.0.21", "node-1").build()).update();
      // The same flow (same source port) moves to b1 once the stale entry is deleted.
      NetnsLab.awaitTrue(clock, () -> "udp-b1".equals(udp(socket)));
    }
  }

  /** The first line answered to a TCP connection made by the node itself (this JVM). */
  static String fromNode(String host, int port) throws Exception {
    try (java.net.Socket socket = new java.net.Socket()) {
      socket.connect(new InetSocketAddress(host, port), 2000);
      socket.setSoTimeout(2000);
      return new java.io.BufferedReader(new java.io.InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8))
          .readLine();
    }
  }

  /** One request and its answer on the flow {@code socket} is; UDP may drop one, so up to 3 tries. */
  private static String udp(DatagramSocket socket) throws Exception {
    byte[] hello = "hello\n".getBytes(StandardCharsets.UTF_8);
    for (int attempt = 0; attempt < 3; attempt++) {
      socket.send(new DatagramPacket(hello, hello.length, new InetSocketAddress("10.96.0.53", 53)));
      DatagramPacket reply = new DatagramPacket(new byte[512], 512);
      try {
        socket.receive(reply);
        return new String(reply.getData(), 0, reply.getLength(), StandardCharsets.UTF_8).strip();
      } catch (java.net.SocketTimeoutException e) {
        // try again on the same flow
      }
    }
    return "timeout";
  }
}
