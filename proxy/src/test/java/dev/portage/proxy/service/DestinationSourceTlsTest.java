package dev.portage.proxy.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.portage.control.client.ControlPlaneTls;
import dev.portage.core.time.FakeClock;
import dev.portage.proxy.TlsControlPlane;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The service proxy's Destination source against a real control plane over TLS: the endpoints of an
 * authority in the endpoints file are resolved through a TLS (and mutual TLS) connection, and a
 * client without the certificate the control plane requires resolves nothing.
 */
class DestinationSourceTlsTest {

  private static final String WEB = "web.default.svc.cluster.local:8080";

  @TempDir Path dir;
  private final FakeClock clock = new FakeClock();
  private TlsControlPlane cp;
  private TestBackend backend;
  private ServiceProxy proxy;

  @AfterEach
  void tearDown() throws Exception {
    if (proxy != null) {
      proxy.close();
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
    backend = TestBackend.start("web");
    cp.service("web", backend.address().getPort());
  }

  private void startProxy(ControlPlaneTls tls) throws Exception {
    Path file = Files.writeString(dir.resolve("endpoints.yaml"),
        "services:\n  - name: web\n    listen: 127.0.0.1:0\n    authority: " + WEB + "\n");
    ServiceProxyConfig config = ServiceProxyConfig.builder()
        .endpointsFile(file).destinationAddr(cp.address()).destinationTls(tls).adminPort(-1).ioThreads(1).build();
    proxy = new ServiceProxy(config, clock.timeSource(), new PrometheusRegistry()).start();
  }

  /** Waits for the endpoints of web, moving the fake clock so that syncs run. */
  private void awaitEndpoints(List<String> expected) {
    await().atMost(Duration.ofSeconds(10)).until(() -> {
      clock.advance(Duration.ofSeconds(1));
      return proxy.endpoints("web").equals(expected);
    });
  }

  @Test
  void resolvesOverTlsWithTheControlPlanesCa() throws Exception {
    controlPlane(false);
    startProxy(new ControlPlaneTls(cp.ca, null, null, "localhost"));

    awaitEndpoints(List.of(backend.endpoint()));
    assertThat(TestClient.greeting(proxy.localAddress("web"))).isEqualTo("web");
  }

  @Test
  void resolvesOverMutualTlsWithAClientCertificate() throws Exception {
    controlPlane(true);
    startProxy(new ControlPlaneTls(cp.ca, cp.clientCert, cp.clientKey, "localhost"));

    awaitEndpoints(List.of(backend.endpoint()));
    assertThat(TestClient.greeting(proxy.localAddress("web"))).isEqualTo("web");
    assertThat(cp.plane.destinationStreamCount()).isEqualTo(1);
  }

  @Test
  void withoutTheClientCertificateNothingResolves() throws Exception {
    controlPlane(true);
    startProxy(new ControlPlaneTls(cp.ca, null, null, "localhost"));

    // The handshake fails at the control plane: no stream ever opens, the service has no endpoint.
    await().atMost(Duration.ofSeconds(10)).until(() -> {
      clock.advance(Duration.ofSeconds(1));
      return proxy.services().contains("web");
    });
    for (int i = 0; i < 5; i++) {
      clock.advance(Duration.ofSeconds(1));
    }
    assertThat(cp.plane.destinationStreamCount()).isZero();
    assertThat(proxy.endpoints("web")).isEmpty();
  }

  @Test
  void aMissingCertificateFileIsAClearError() {
    ServiceProxyConfig config = ServiceProxyConfig.builder()
        .endpointsFile(dir.resolve("endpoints.yaml")).destinationAddr("127.0.0.1:8086")
        .destinationTls(new ControlPlaneTls(dir.resolve("ca.pem"), null, null, null)).adminPort(-1).build();
    assertThatThrownBy(() -> new ServiceProxy(config, clock.timeSource(), new PrometheusRegistry()).start())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("destination TLS").hasMessageContaining("ca.pem");
  }

  @Test
  void tlsNeedsADestinationAddress() {
    assertThatThrownBy(() -> ServiceProxyConfig.builder().endpointsFile(dir.resolve("e.yaml"))
        .destinationTls(new ControlPlaneTls(dir.resolve("ca.pem"), null, null, null)).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("destinationTls: set (expected: only with destinationAddr)");
  }
}
