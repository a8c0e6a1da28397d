package dev.portage.tunnel.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.portage.core.testing.MockApiServerExtension;
import dev.portage.core.time.FakeClock;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Server leases against fabric8's mock API server in CRUD mode, on a fake clock. */
@ExtendWith(MockApiServerExtension.class)
class LeaseControllerIntegrationTest {
  private static final Map<String, String> LABELS = Map.of("k8s-app", "konnectivity-server");
  KubernetesClient client;
  private final FakeClock clock = new FakeClock();
  private ServerFixture fx;

  @AfterEach
  void tearDown() throws Exception {
    if (fx != null) {
      fx.close();
    }
  }

  private Lease lease(String name) {
    return client.resources(Lease.class).inNamespace("kube-system").withName(name).get();
  }

  private void foreignLease(String name, Map<String, String> labels, Duration renewedAgo) {
    client.resources(Lease.class).inNamespace("kube-system").resource(new LeaseBuilder()
        .withNewMetadata().withName(name).withLabels(labels).endMetadata()
        .withNewSpec().withHolderIdentity(name).withLeaseDurationSeconds(30)
        .withRenewTime(ZonedDateTime.ofInstant(clock.instant().minus(renewedAgo), ZoneOffset.UTC))
        .endSpec().build()).create();
  }

  @Test
  void acquiresRenewsCollectsExpiredAndReleases() throws Exception {
    Instant epoch = clock.instant();
    foreignLease("konnectivity-proxy-server-old", LABELS, Duration.ofSeconds(31));
    foreignLease("konnectivity-proxy-server-live", LABELS, Duration.ofSeconds(10));
    foreignLease("unrelated", Map.of("app", "other"), Duration.ofHours(1));

    fx = new ServerFixture(b -> b.enableLeaseController(true), clock.timeSource(), client);
    Lease own = lease("konnectivity-proxy-server-server-1");
    assertThat(own.getMetadata().getLabels()).containsEntry("k8s-app", "konnectivity-server");
    assertThat(own.getSpec().getHolderIdentity()).isEqualTo("server-1");
    assertThat(own.getSpec().getLeaseDurationSeconds()).isEqualTo(30);
    assertThat(own.getSpec().getRenewTime().toInstant()).isEqualTo(epoch);

    clock.advance(Duration.ofSeconds(15));
    assertThat(lease("konnectivity-proxy-server-server-1").getSpec().getRenewTime().toInstant())
        .isEqualTo(epoch.plusSeconds(15));
    assertThat(lease("konnectivity-proxy-server-old")).isNull();
    assertThat(lease("konnectivity-proxy-server-live")).isNotNull();
    assertThat(lease("unrelated")).isNotNull();

    clock.advance(Duration.ofSeconds(15));
    assertThat(lease("konnectivity-proxy-server-live")).isNull();
    assertThat(lease("konnectivity-proxy-server-server-1").getSpec().getRenewTime().toInstant())
        .isEqualTo(epoch.plusSeconds(30));
    // upstream's lease garbage collection metrics: two lists, two culled leases
    assertThat(fx.metric("konnectivity_network_proxy_server_lease_list", "http_status_code", "200")).isEqualTo(2);
    assertThat(fx.metric("konnectivity_network_proxy_server_lease_delete", "http_status_code", "200")).isEqualTo(2);
    assertThat(fx.metric("konnectivity_network_proxy_server_culled_leases_count")).isEqualTo(2);
    assertThat(fx.metric("konnectivity_network_proxy_server_lease_list_latency_seconds", "http_status_code", "200"))
        .isEqualTo(2);

    fx.close();
    fx = null;
    assertThat(lease("konnectivity-proxy-server-server-1")).isNull();
    assertThat(clock.pendingTasks()).isZero();
  }

  @Test
  void leaseDeletedBySomeoneElseIsRecreatedOnTheNextRenewal() {
    fx = new ServerFixture(b -> b.enableLeaseController(true).leaseNamespace("tunnel")
        .leaseLabels(Map.of("app", "tunnel")), clock.timeSource(), client);
    client.resources(Lease.class).inNamespace("tunnel").withName("konnectivity-proxy-server-server-1").delete();
    clock.advance(Duration.ofSeconds(15));
    Lease again = client.resources(Lease.class).inNamespace("tunnel").withName("konnectivity-proxy-server-server-1").get();
    assertThat(again.getMetadata().getLabels()).containsEntry("app", "tunnel");
  }

  @Test
  void liveness() {
    Instant now = Instant.parse("2026-01-01T00:00:30Z");
    Lease l = new LeaseBuilder().withNewSpec().withLeaseDurationSeconds(30)
        .withRenewTime(ZonedDateTime.parse("2026-01-01T00:00:01Z")).endSpec().build();
    assertThat(LeaseController.isLive(l, now)).isTrue();
    assertThat(LeaseController.isLive(l, now.plusSeconds(1))).isFalse();
    Lease acquiredOnly = new LeaseBuilder().withNewSpec().withLeaseDurationSeconds(30)
        .withAcquireTime(ZonedDateTime.parse("2026-01-01T00:00:01Z")).endSpec().build();
    assertThat(LeaseController.isLive(acquiredOnly, now)).isTrue();
    assertThat(LeaseController.isLive(new LeaseBuilder().withNewSpec().endSpec().build(), now)).isFalse();
  }
}
