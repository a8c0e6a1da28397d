package dev.portage.proxy.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.portage.core.testing.MockApiServerExtension;
import dev.portage.core.time.FakeClock;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * kube-proxy's interfaces a node's tooling reads: the health server ({@code /healthz} and {@code
 * /livez} with kube-proxy's JSON and semantics), {@code /proxyMode}, and the {@code kubeproxy_}
 * metrics, here with the userspace relay (listeners only, no kernel rules).
 */
@ExtendWith(MockApiServerExtension.class)
class KubeProxyInterfacesTest {

  static KubernetesClient client;

  private static HttpResponse<String> get(InetSocketAddress address, String path) throws Exception {
    try (HttpClient http = HttpClient.newHttpClient()) {
      return http.send(HttpRequest.newBuilder(URI.create(
              "http://" + address.getAddress().getHostAddress() + ":" + address.getPort() + path))
          .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
    }
  }

  @Test
  void healthFollowsPendingChangesAndMetricsUseKubeProxyNames() throws Exception {
    client.services().inAnyNamespace().delete();
    client.discovery().v1().endpointSlices().inAnyNamespace().delete();
    FakeClock clock = new FakeClock(Instant.parse("2026-11-26T10:00:00Z"));
    PrometheusRegistry registry = new PrometheusRegistry();
    ServiceProxyConfig config = ServiceProxyConfig.builder().kubernetes(true).proxyMode(ProxyMode.USERSPACE)
        .kernelRules(false).bindAddress("127.0.0.1").adminPort(0).healthzBindAddress("127.0.0.1").healthzPort(0)
        .syncPeriod(Duration.ofSeconds(30)).ioThreads(1).build();
    client.services().resource(KubeObjects.service("web", "10.96.0.10", "http", "TCP", 80).build()).create();
    client.discovery().v1().endpointSlices().resource(KubeObjects.slice("web-1", "web", "http", "TCP", 8080)
        .editMetadata().addToAnnotations(ServicePorts.TRIGGER_TIME_ANNOTATION, "2026-11-26T09:59:58Z").endMetadata()
        .addNewEndpoint().withAddresses("127.0.0.1").endEndpoint().build()).create();
    try (ServiceProxy proxy = new ServiceProxy(
        config, new KubernetesServiceSource(client, false, "node-1"), clock.timeSource(), registry)) {
      proxy.start();
      HttpResponse<String> starting = get(proxy.healthzAddress(), "/healthz");
      assertThat(starting.statusCode()).isEqualTo(200); // healthy while starting
      assertThat(starting.headers().firstValue("Content-Type")).hasValue("application/json");
      assertThat(starting.headers().firstValue("X-Content-Type-Options")).hasValue("nosniff");
      assertThat(starting.body()).contains("\"lastUpdated\"").contains("\"currentTime\"").contains("\"nodeEligible\": true");
      assertThat(get(proxy.healthzAddress(), "/livez").body()).doesNotContain("nodeEligible");
      assertThat(get(proxy.adminAddress(), "/proxyMode").body()).isEqualTo("userspace");

      await().atMost(Duration.ofSeconds(10)).until(() -> {
        clock.advance(Duration.ofMillis(100));
        return proxy.localAddress("default/web:http") != null;
      });
      String metrics = get(proxy.adminAddress(), "/metrics").body();
      assertThat(metrics).contains("kubeproxy_sync_proxy_rules_duration_seconds_count{ip_family=\"IPv4\"}")
          .contains("kubeproxy_sync_proxy_rules_last_timestamp_seconds{ip_family=\"IPv4\"}")
          // the slice's change was triggered 2 s (of fake time) before it was programmed
          .contains("kubeproxy_network_programming_duration_seconds_count{ip_family=\"IPv4\"} 1");

      // A change no sync applies for longer than 2 x syncPeriod turns both endpoints unhealthy.
      proxy.close();
      ProxyHealth health = new ProxyHealth(clock, clock, Duration.ofSeconds(30), new KubeProxyMetrics(new PrometheusRegistry()));
      health.queued();
      clock.advance(Duration.ofSeconds(60));
      assertThat(health.healthy()).isTrue();
      clock.advance(Duration.ofSeconds(1));
      assertThat(health.healthy()).isFalse();
      assertThat(health.healthz().status()).isEqualTo(503);
      assertThat(health.livez().status()).isEqualTo(503);
      health.applied(clock.nanoTime(), false);
      assertThat(health.healthz().status()).isEqualTo(200);
    }
  }
}
