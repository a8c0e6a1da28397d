package dev.portage.proxy.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.portage.core.time.FakeClock;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
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

/** Services and EndpointSlices from a Kubernetes API mock server (CRUD mode) drive the proxy. */
@EnableKubernetesMockClient(crud = true)
class KubernetesEndpointSourceIntegrationTest {

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
        .addToLabels(KubernetesEndpointSource.SERVICE_NAME_LABEL, service).endMetadata()
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
    ServiceProxyConfig config =
        ServiceProxyConfig.builder().kubernetes(true).bindAddress("127.0.0.1").adminPort(-1).ioThreads(1).build();
    proxy = new ServiceProxy(
        config, new KubernetesEndpointSource(client, false, "127.0.0.1"), clock.timeSource(), new PrometheusRegistry());
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
  void servicePortsGetListenersOverTheReadyEndpointsOfTheirSlices() throws Exception {
    int port = freePort();
    client.services().resource(service("web", "10.96.0.10", port, "None")).create();
    client.discovery().v1().endpointSlices().resource(slice("web-a", "web", a.address().getPort(), "127.0.0.1", true)).create();
    client.discovery().v1().endpointSlices().resource(slice("web-b", "web", b.address().getPort(), "127.0.0.1", true)).create();
    client.discovery().v1().endpointSlices().resource(slice("web-c", "web", a.address().getPort(), "127.0.0.9", false)).create();
    startProxy();

    awaitSynced(() -> proxy.endpoints("default/web:http").size() == 2);
    assertThat(proxy.services()).containsExactly("default/web:http"); // the UDP port is not proxied
    InetSocketAddress web = proxy.localAddress("default/web:http");
    assertThat(web).isEqualTo(new InetSocketAddress("127.0.0.1", port));
    assertThat(List.of(TestClient.greeting(web), TestClient.greeting(web))).containsExactlyInAnyOrder("a", "b");

    client.discovery().v1().endpointSlices().inNamespace("default").withName("web-a").delete();
    awaitSynced(() -> proxy.endpoints("default/web:http").equals(List.of(b.endpoint())));
    assertThat(TestClient.greeting(web)).isEqualTo("b");

    client.services().inNamespace("default").withName("web").delete();
    awaitSynced(() -> proxy.services().isEmpty());
  }

  @Test
  void stateFollowsKubeProxyRules() throws Exception {
    KubernetesEndpointSource source = new KubernetesEndpointSource(client, false, "127.0.0.1");
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
        .addToLabels(KubernetesEndpointSource.SERVICE_NAME_LABEL, "plain").endMetadata()
        .withAddressType("IPv4")
        .addNewPort().withPort(9000).endPort()
        .addNewEndpoint().withAddresses("10.1.0.1", "10.1.0.2").endEndpoint() // no conditions: ready
        .build();

    Map<String, ServiceSpec> state = source.desiredState(
        List.of(headless, external, sticky, unnamed), List.of(unnamedSlice));

    assertThat(state.keySet()).containsExactly("default/plain", "default/sticky:http");
    assertThat(state.get("default/sticky:http").affinityTimeout()).isEqualTo(Duration.ofSeconds(60));
    assertThat(state.get("default/plain").affinityTimeout()).isNull();
    assertThat(state.get("default/plain").endpoints()).containsExactly(
        new InetSocketAddress("10.1.0.1", 9000), new InetSocketAddress("10.1.0.2", 9000));
    assertThat(state.get("default/plain").listen()).isEqualTo(new InetSocketAddress("127.0.0.1", 8083));
    source.close();
  }
}
