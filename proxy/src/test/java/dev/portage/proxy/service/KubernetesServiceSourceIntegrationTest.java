package dev.portage.proxy.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.portage.core.testing.MockApiServerExtension;
import dev.portage.core.time.FakeClock;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import dev.portage.proxy.service.model.Protocol;
import dev.portage.proxy.service.model.ServiceEndpoint;
import dev.portage.proxy.service.model.ServicePort;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Services and EndpointSlices from a Kubernetes API mock server (CRUD mode) drive the userspace relay
 * (listeners only: the kernel's redirects are tested in the network namespace tests).
 */
@ExtendWith(MockApiServerExtension.class)
class KubernetesServiceSourceIntegrationTest {

  static KubernetesClient client;

  private final FakeClock clock = new FakeClock();
  private TestBackend a;
  private TestBackend b;
  private ServiceProxy proxy;

  @BeforeEach
  void setUp() throws IOException {
    a = TestBackend.start("a");
    b = TestBackend.start("b");
    client.services().inAnyNamespace().delete();
    client.discovery().v1().endpointSlices().inAnyNamespace().delete();
  }

  @AfterEach
  void tearDown() throws IOException {
    if (proxy != null) {
      proxy.close();
    }
    a.close();
    b.close();
  }

  private static Service service(String name, String clusterIp, int port, String affinity) {
    return new ServiceBuilder()
        .withNewMetadata().withName(name).withNamespace("default").endMetadata()
        .withNewSpec()
        .withClusterIP(clusterIp)
        .addNewPort().withName("http").withPort(port).withProtocol("TCP").endPort()
        .addNewPort().withName("dns").withPort(53).withProtocol("UDP").endPort()
        .withSessionAffinity(affinity)
        .withNewSessionAffinityConfig().withNewClientIP().withTimeoutSeconds(60).endClientIP()
        .endSessionAffinityConfig()
        .endSpec()
        .build();
  }

  private static EndpointSlice slice(String name, String service, int port, String ip, boolean ready) {
    return new EndpointSliceBuilder()
        .withNewMetadata().withName(name).withNamespace("default")
        .addToLabels(ServicePorts.SERVICE_NAME_LABEL, service).endMetadata()
        .withAddressType("IPv4")
        .addNewPort().withName("http").withPort(port).withProtocol("TCP").endPort()
        .addNewEndpoint().withAddresses(ip).withNewConditions().withReady(ready).endConditions().endEndpoint()
        .build();
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  private void startProxy() throws IOException {
    ServiceProxyConfig config = ServiceProxyConfig.builder().kubernetes(true).proxyMode(ProxyMode.USERSPACE)
        .kernelRules(false).bindAddress("127.0.0.1").adminPort(-1).ioThreads(1).build();
    proxy = new ServiceProxy(
        config, new KubernetesServiceSource(client, false, "node-1"), clock.timeSource(), new PrometheusRegistry());
    proxy.start();
  }

  /** Waits for informer events to arrive, letting fake time pass so the rate-limited sync runs. */
  private void awaitSynced(Callable<Boolean> condition) {
    await().atMost(Duration.ofSeconds(10)).until(() -> {
      clock.advance(Duration.ofSeconds(1));
      return condition.call();
    });
  }

  @Test
  void servicePortsGetListenersOfTheirOwnOverTheReadyEndpointsOfTheirSlices() throws Exception {
    client.services().resource(service("web", "10.96.0.10", 80, "None")).create();
    client.services().resource(service("web2", "10.96.0.11", 80, "None")).create(); // same port: no clash
    client.discovery().v1().endpointSlices().resource(slice("web-a", "web", a.address().getPort(), "127.0.0.1", true)).create();
    client.discovery().v1().endpointSlices().resource(slice("web-b", "web", b.address().getPort(), "127.0.0.1", true)).create();
    client.discovery().v1().endpointSlices().resource(slice("web-c", "web", a.address().getPort(), "127.0.0.9", false)).create();
    startProxy();

    awaitSynced(() -> proxy.endpoints("default/web:http").size() == 2);
    // the UDP ports are not relayed; both Services on port 80 get a listener of their own
    assertThat(proxy.services()).containsExactly("default/web2:http", "default/web:http");
    InetSocketAddress web = proxy.localAddress("default/web:http");
    assertThat(web.getAddress().getHostAddress()).isEqualTo("127.0.0.1");
    assertThat(web.getPort()).isNotEqualTo(80).isNotEqualTo(proxy.localAddress("default/web2:http").getPort());
    assertThat(List.of(TestClient.greeting(web), TestClient.greeting(web))).containsExactlyInAnyOrder("a", "b");

    client.discovery().v1().endpointSlices().inNamespace("default").withName("web-a").delete();
    awaitSynced(() -> proxy.endpoints("default/web:http").equals(List.of(b.endpoint())));
    assertThat(TestClient.greeting(web)).isEqualTo("b");

    client.services().inNamespace("default").withName("web").delete();
    client.services().inNamespace("default").withName("web2").delete();
    awaitSynced(() -> proxy.services().isEmpty());
  }

  @Test
  void portsFollowKubeProxyRules() {
    Service headless = service("headless", "None", 8080, "None");
    Service external = new ServiceBuilder(service("ext", "", 8081, "None"))
        .editSpec().withType("ExternalName").withExternalName("example.com").endSpec().build();
    Service sticky = service("sticky", "10.96.0.11", 8082, "ClientIP");
    Service unnamed = new ServiceBuilder()
        .withNewMetadata().withName("plain").withNamespace("default").endMetadata()
        .withNewSpec().withClusterIP("10.96.0.12").addNewPort().withPort(8083).endPort().endSpec()
        .build();
    EndpointSlice unnamedSlice = new EndpointSliceBuilder()
        .withNewMetadata().withName("plain-1").withNamespace("default")
        .addToLabels(ServicePorts.SERVICE_NAME_LABEL, "plain").endMetadata()
        .withAddressType("IPv4")
        .addNewPort().withPort(9000).endPort()
        .addNewEndpoint().withAddresses("10.1.0.1").withNodeName("node-1").endEndpoint() // no conditions: ready
        .addNewEndpoint().withAddresses("10.1.0.2").endEndpoint()
        .build();

    assertThat(ServicePorts.of(headless, List.of(), "node-1")).isEmpty();
    assertThat(ServicePorts.of(external, List.of(), "node-1")).isEmpty();
    Map<String, ServicePort> sticky2 = ServicePorts.of(sticky, List.of(), "node-1");
    assertThat(sticky2.keySet()).containsExactly("default/sticky:http", "default/sticky:dns");
    assertThat(sticky2.get("default/sticky:http").affinityTimeout()).isEqualTo(Duration.ofSeconds(60));
    assertThat(sticky2.get("default/sticky:dns").protocol()).isEqualTo(Protocol.UDP);
    ServicePort plain = ServicePorts.of(unnamed, List.of(unnamedSlice), "node-1").get("default/plain");
    assertThat(plain.affinityTimeout()).isNull();
    assertThat(plain.clusterIP()).isEqualTo("10.96.0.12");
    assertThat(plain.endpoints()).containsExactly(
        ServiceEndpoint.ready("10.1.0.1", 9000, true), ServiceEndpoint.ready("10.1.0.2", 9000, false));
  }
}
