package dev.portage.tunnel.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.portage.core.testing.MockApiServerExtension;
import dev.portage.core.time.FakeClock;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Server lease counting against a Kubernetes API mock (CRUD mode). */
@ExtendWith(MockApiServerExtension.class)
class LeaseCounterIntegrationTest {
  private static final String LABEL = "k8s-app=konnectivity-server";

  static KubernetesClient client;

  private final FakeClock clock = new FakeClock(Instant.now().truncatedTo(ChronoUnit.SECONDS));
  private TestProxyServer server;
  private TunnelAgent agent;

  @BeforeEach
  void cleanLeases() {
    client.leases().inNamespace("kube-system").delete();
  }

  @AfterEach
  void tearDown() throws Exception {
    if (agent != null) {
      agent.close();
    }
    if (server != null) {
      server.close();
    }
  }

  private void lease(String name, Instant renew, Instant acquire, int seconds, String app) {
    Lease lease = new LeaseBuilder()
        .withNewMetadata().withName(name).withNamespace("kube-system").addToLabels("k8s-app", app).endMetadata()
        .withNewSpec()
        .withHolderIdentity(name)
        .withLeaseDurationSeconds(seconds)
        .withRenewTime(renew == null ? null : ZonedDateTime.ofInstant(renew, ZoneOffset.UTC))
        .withAcquireTime(acquire == null ? null : ZonedDateTime.ofInstant(acquire, ZoneOffset.UTC))
        .endSpec()
        .build();
    client.leases().inNamespace("kube-system").resource(lease).create();
  }

  @Test
  void countsLeasesWhoseRenewOrAcquireTimePlusDurationIsInTheFuture() {
    Instant now = clock.instant();
    lease("konnectivity-proxy-server-a", now.minusSeconds(5), null, 30, "konnectivity-server");
    lease("konnectivity-proxy-server-b", now.minusSeconds(10), now.minusSeconds(100), 30, "konnectivity-server");
    lease("konnectivity-proxy-server-c", null, now.minusSeconds(20), 30, "konnectivity-server");
    lease("konnectivity-proxy-server-old", now.minusSeconds(60), null, 30, "konnectivity-server");
    lease("someone-else", now, null, 30, "other");

    io.prometheus.metrics.model.registry.PrometheusRegistry registry = new io.prometheus.metrics.model.registry.PrometheusRegistry();
    LeaseCounter counter = new LeaseCounter(client, "kube-system", LABEL, clock, clock, Runnable::run,
        new AgentMetrics(registry));
    assertThat(counter.count()).isEqualTo(3);
    // upstream's lease list metrics, labelled with the HTTP answer
    assertThat(TestMetrics.value(registry,
        "konnectivity_network_proxy_agent_lease_lists_total{http_response_code=\"200\",reason=\"\"}")).isEqualTo(1);
    assertThat(TestMetrics.value(registry,
        "konnectivity_network_proxy_agent_lease_list_latency_seconds_count{http_response_code=\"200\"}")).isEqualTo(1);

    clock.advance(Duration.ofSeconds(15)); // c (acquired 20 s ago) expires at +10 s
    assertThat(counter.count()).isEqualTo(2);
    clock.advance(Duration.ofSeconds(10));
    assertThat(counter.count()).isZero();
  }

  @Test
  void countIsUnknownUntilTheFirstListCompletes() {
    LeaseCounter counter = new LeaseCounter(client, "kube-system", LABEL, clock, clock, task -> {},
        new AgentMetrics(new io.prometheus.metrics.model.registry.PrometheusRegistry()));
    assertThat(counter.count()).isEqualTo(-1);
  }

  @Test
  void agentConnectsToAsManyServersAsThereAreLiveLeases() throws Exception {
    Instant now = clock.instant();
    for (String id : new String[] {"a", "b", "c"}) {
      lease("konnectivity-proxy-server-" + id, now, null, 3600, "konnectivity-server");
    }
    AtomicInteger n = new AtomicInteger();
    server = new TestProxyServer(() -> "server-" + n.incrementAndGet(), 1); // header says 1
    agent = new TunnelAgent(
        TunnelAgentConfig.builder()
            .proxyServerPort(server.port())
            .healthServerPort(-1)
            .adminServerPort(-1)
            .countServerLeases(true)
            .build(),
        clock.timeSource(), new PrometheusRegistry(), client).start();

    await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20)).until(() -> {
      clock.advance(Duration.ofMillis(250));
      return agent.connectedServers() == 3;
    });
    assertThat(agent.clientSet().targetServerCount()).isEqualTo(3);
  }

  @Test
  void maxSourceTakesTheLargerOfHeaderAndLeases() throws Exception {
    lease("konnectivity-proxy-server-a", clock.instant(), null, 3600, "konnectivity-server");
    AtomicInteger n = new AtomicInteger();
    server = new TestProxyServer(() -> "server-" + n.incrementAndGet(), 2); // header says 2, leases 1
    agent = new TunnelAgent(
        TunnelAgentConfig.builder()
            .proxyServerPort(server.port())
            .healthServerPort(-1)
            .adminServerPort(-1)
            .countServerLeases(true)
            .serverCountSource(TunnelAgentConfig.ServerCountSource.MAX)
            .build(),
        clock.timeSource(), new PrometheusRegistry(), client).start();

    await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20)).until(() -> {
      clock.advance(Duration.ofMillis(250));
      return agent.connectedServers() == 2;
    });
    clock.advance(Duration.ofSeconds(20));
    assertThat(agent.connectedServers()).isEqualTo(2);
    assertThat(agent.clientSet().targetServerCount()).isEqualTo(2);
  }
}
