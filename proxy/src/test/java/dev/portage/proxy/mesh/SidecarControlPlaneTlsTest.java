package dev.portage.proxy.mesh;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.portage.control.client.ControlPlaneTls;
import dev.portage.core.time.FakeClock;
import dev.portage.proxy.TlsControlPlane;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The sidecar's connection to a real control plane whose gRPC port speaks TLS: with the control
 * plane's CA it resolves and proxies; with mutual TLS it presents its client certificate; without
 * the right certificate, CA or name it gets no endpoints and requests fail fast.
 */
class SidecarControlPlaneTlsTest {

  static final String WEB = MeshFixture.authority("web");

  @TempDir Path dir;
  final FakeClock clock = new FakeClock();
  TlsControlPlane cp;
  Backend backend;
  Sidecar sidecar;

  @AfterEach
  void stop() {
    if (sidecar != null) {
      sidecar.close();
    }
    if (cp != null) {
      cp.close();
    }
    if (backend != null) {
      backend.close();
    }
  }

  private void controlPlane(boolean mutual) throws Exception {
    cp = new TlsControlPlane(dir, mutual);
    backend = new Backend("web");
    cp.service("web", backend.port());
  }

  private Sidecar start(ControlPlaneTls tls) throws IOException {
    SidecarConfig config = SidecarConfig.builder(cp.address()).destinationTls(tls)
        .outboundPort(0).adminPort(0).ioThreads(1).build();
    sidecar = new Sidecar(config, clock.timeSource(), new PrometheusRegistry()).start();
    return sidecar;
  }

  private RawHttp.Response get() throws IOException {
    return RawHttp.send(sidecar.outboundAddress(), "GET", WEB, "/hello");
  }

  /** A request that gets no endpoint: 503 once the fail-fast timeouts (on the fake clock) have passed. */
  private void assertFailsFast() throws Exception {
    CompletableFuture<RawHttp.Response> waiting =
        RawHttp.sendAsync(sidecar.outboundAddress(), "GET", WEB, "/hello", null);
    // The profile lookup, then the endpoints, each wait up to the fail-fast timeout.
    await().atMost(10, TimeUnit.SECONDS).pollInterval(Duration.ofMillis(20)).until(() -> {
      clock.advance(Duration.ofSeconds(1));
      return waiting.isDone();
    });
    RawHttp.Response r = waiting.get();
    assertThat(r.status()).isEqualTo(503);
    assertThat(backend.hits).hasValue(0);
  }

  @Test
  void tlsWithTheControlPlanesCaResolvesAndProxies() throws Exception {
    controlPlane(false);
    start(new ControlPlaneTls(cp.ca, null, null, "localhost"));

    RawHttp.Response r = get();
    assertThat(r.status()).isEqualTo(200);
    assertThat(r.text()).isEqualTo("hello from /hello");
  }

  @Test
  void mutualTlsWithTheClientCertificate() throws Exception {
    controlPlane(true);
    start(new ControlPlaneTls(cp.ca, cp.clientCert, cp.clientKey, "localhost"));

    assertThat(get().status()).isEqualTo(200);
    assertThat(cp.plane.destinationStreamCount()).isGreaterThanOrEqualTo(1);
  }

  @Test
  void withoutAClientCertificateTheControlPlaneRefusesTheSidecar() throws Exception {
    controlPlane(true);
    start(new ControlPlaneTls(cp.ca, null, null, "localhost"));
    assertFailsFast();
    assertThat(cp.plane.destinationStreamCount()).isZero();
  }

  @Test
  void aClientCertificateFromAnotherCaIsRefused() throws Exception {
    controlPlane(true);
    start(new ControlPlaneTls(cp.ca, cp.strangerCert, cp.strangerKey, "localhost"));
    assertFailsFast();
  }

  @Test
  void theControlPlanesCertificateMustNameTheServer() throws Exception {
    controlPlane(false);
    start(new ControlPlaneTls(cp.ca, null, null, "linkerd-destination.linkerd.svc"));
    assertFailsFast();
    assertThat(cp.plane.destinationStreamCount()).isZero();
  }

  @Test
  void aMissingCaFileFailsAtConstructionNamingIt() throws Exception {
    controlPlane(false);
    Path missing = dir.resolve("no-such-ca.pem");
    assertThatThrownBy(() -> start(new ControlPlaneTls(missing, null, null, null)))
        .isInstanceOf(UncheckedIOException.class)
        .hasMessageContaining("no-such-ca.pem");
  }
}
