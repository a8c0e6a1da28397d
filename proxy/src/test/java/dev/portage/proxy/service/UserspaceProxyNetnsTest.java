package dev.portage.proxy.service;

import static dev.portage.proxy.service.KubeObjects.endpoint;
import static dev.portage.proxy.service.KubeObjects.slice;
import static org.assertj.core.api.Assertions.assertThat;

import dev.portage.core.testing.MockApiServerExtension;
import dev.portage.core.time.FakeClock;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The userspace relay serving Kubernetes Services on a real kernel: nftables redirects each
 * ClusterIP:port and NodePort to the relay's own listener for that Service port, so two Services on
 * port 80 no longer fight over one bind.
 */
@ExtendWith(MockApiServerExtension.class)
class UserspaceProxyNetnsTest {

  static KubernetesClient client;

  private final FakeClock clock = new FakeClock();
  private NetnsLab lab;
  private ServiceProxy proxy;
  private String client1;

  @BeforeEach
  void setUp() throws Exception {
    lab = NetnsLab.start();
    client1 = lab.webPods()[3];
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

  @Test
  void twoServicesOnOnePortEachReachTheirOwnEndpointsThroughTheRelay() throws Exception {
    KubeObjects.createTwoWebServices(client, "node-1", "node-1");
    ServiceProxyConfig config = ServiceProxyConfig.builder()
        .kubernetes(true).proxyMode(ProxyMode.USERSPACE).hostname("node-1")
        .adminPort(-1).ioThreads(1).build();
    proxy = new ServiceProxy(
        config, new KubernetesServiceSource(client, false, "node-1"), clock.timeSource(), new PrometheusRegistry());
    proxy.start();

    NetnsLab.awaitTrue(clock, () -> lab.tcpFrom(client1, "10.96.0.20", 80).equals("b1"));
    assertThat(proxy.localAddress("default/web-a:http").getPort())
        .isNotEqualTo(proxy.localAddress("default/web-b:http").getPort());
    assertThat(lab.answers(client1, "10.96.0.10", 80, 10)).containsExactlyInAnyOrder("a1", "a2"); // round robin
    assertThat(lab.answers(client1, "10.96.0.20", 80, 5)).containsExactly("b1");
    assertThat(lab.answers(client1, NetnsLab.NODE_IP, 30080, 10)).containsExactlyInAnyOrder("a1", "a2");
    assertThat(NftablesProxyNetnsTest.fromNode("10.96.0.20", 80)).isEqualTo("b1");

    client.discovery().v1().endpointSlices().resource(
        endpoint(slice("web-a-1", "web-a", "http", "TCP", 8080), "10.244.0.12", "node-1").build()).update();
    NetnsLab.awaitTrue(clock, () -> lab.answers(client1, "10.96.0.10", 80, 6).equals(Set.of("a2")));

    client.services().inNamespace("default").withName("web-b").delete();
    NetnsLab.awaitTrue(clock, () -> proxy.localAddress("default/web-b:http") == null);
    assertThat(lab.tcpFrom(client1, "10.96.0.20", 80)).startsWith("ERROR");
  }
}
