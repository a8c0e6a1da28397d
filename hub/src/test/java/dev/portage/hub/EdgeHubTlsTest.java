package dev.portage.hub;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.portage.core.net.TlsContexts;
import dev.portage.core.testing.MockApiServers;
import dev.portage.core.time.FakeClock;
import dev.portage.hub.bootstrap.NodeBootstrap;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.netty.pkitesting.CertificateBuilder;
import io.netty.pkitesting.X509Bundle;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayInputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * TLS on both sides of the hub: clients on the secure proxy port, and the hub's client certificate
 * to an API server that requires one (the fabric8 mock behind a TLS terminator), on real sockets.
 */
class EdgeHubTlsTest {

  @TempDir Path dir;
  private final FakeClock clock = new FakeClock();
  private KubernetesMockServer apiServer;
  private TlsFront front;
  private EdgeHub hub;
  private Path ca;
  private Path serverCert;
  private Path serverKey;
  private Path hubCert;
  private Path hubKey;

  @BeforeEach
  void setUp() throws Exception {
    Instant now = Instant.now().truncatedTo(ChronoUnit.SECONDS);
    CertificateBuilder base = new CertificateBuilder().notBefore(now.minus(1, ChronoUnit.HOURS))
        .notAfter(now.plus(1, ChronoUnit.DAYS)).ecp256();
    X509Bundle caBundle =
        base.copy().subject("CN=cluster-ca").setIsCertificateAuthority(true).buildSelfSigned();
    X509Bundle server = base.copy().subject("CN=localhost").addSanDnsName("localhost")
        .addExtendedKeyUsageServerAuth().buildIssuedBy(caBundle);
    X509Bundle node = base.copy().subject("CN=system:node:edge-1,O=system:nodes")
        .addExtendedKeyUsageClientAuth().buildIssuedBy(caBundle);
    ca = Files.writeString(dir.resolve("ca.crt"), caBundle.getCertificatePEM());
    serverCert = Files.writeString(dir.resolve("server.crt"), server.getCertificatePathPEM());
    serverKey = Files.writeString(dir.resolve("server.key"), server.getPrivateKeyPEM());
    hubCert = Files.writeString(dir.resolve("node.crt"), node.getCertificatePathPEM());
    hubKey = Files.writeString(dir.resolve("node.key"), node.getPrivateKeyPEM());

    var expectations = new java.util.HashMap<io.fabric8.mockwebserver.ServerRequest,
        java.util.Queue<io.fabric8.mockwebserver.ServerResponse>>();
    apiServer = new KubernetesMockServer(new io.fabric8.mockwebserver.Context(),
        new io.fabric8.mockwebserver.MockWebServer(), expectations,
        new io.fabric8.kubernetes.client.server.mock.KubernetesMixedDispatcher(expectations), false);
    apiServer.init(java.net.InetAddress.getLoopbackAddress(), 0);
    try (KubernetesClient c = apiServer.createClient()) {
      c.pods().inNamespace("default").resource(new PodBuilder().withNewMetadata()
          .withName("tls-pod").withNamespace("default").endMetadata().build()).create();
    }
    // The API server's side: the CA's server certificate, and a client certificate required.
    front = new TlsFront(TlsContexts.server(serverCert, serverKey, ca),
        new InetSocketAddress("127.0.0.1", apiServer.getPort()));
  }

  @AfterEach
  void tearDown() {
    if (hub != null) {
      hub.close();
    }
    if (front != null) {
      front.close();
    }
    MockApiServers.destroy(apiServer);
  }

  private EdgeHub startHub(Path clientCert, Path clientKey) throws Exception {
    EdgeHubConfig config = EdgeHubConfig
        .defaults(List.of("https://localhost:" + front.port()), dir.resolve("cache"))
        .withPorts(0, 0, 0)
        .withTls(ca, clientCert, clientKey, serverCert, serverKey);
    hub = new EdgeHub(config, clock.timeSource(), new PrometheusRegistry()).start();
    clock.runDue();
    return hub;
  }

  private static SSLContext trusting(Path caFile) throws Exception {
    KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
    trust.load(null, null);
    trust.setCertificateEntry("ca", CertificateFactory.getInstance("X.509").generateCertificate(
        new ByteArrayInputStream(Files.readAllBytes(caFile))));
    TrustManagerFactory tmf =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(trust);
    SSLContext ctx = SSLContext.getInstance("TLS");
    ctx.init(null, tmf.getTrustManagers(), null);
    return ctx;
  }

  private HttpResponse<String> get(HttpClient client, String path) throws Exception {
    return client.send(HttpRequest.newBuilder(
            URI.create("https://localhost:" + hub.secureProxyAddress().getPort() + path))
            .header("User-Agent", "kubelet/v1.30").timeout(Duration.ofSeconds(10)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void securePortServesClientsAndTheHubPresentsItsClientCertificateToTheApiServer()
      throws Exception {
    startHub(hubCert, hubKey);
    HttpClient client = HttpClient.newBuilder().sslContext(trusting(ca))
        .version(HttpClient.Version.HTTP_1_1).build();
    HttpResponse<String> r = get(client, "/api/v1/namespaces/default/pods/tls-pod");
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.body()).contains("\"name\":\"tls-pod\"");
    assertThat(front.clientSubjects).isNotEmpty()
        .allSatisfy(s -> assertThat(s).contains("CN=system:node:edge-1"));
    assertThat(front.failedHandshakes).isEmpty();
    await().atMost(Duration.ofSeconds(10)).until(
        () -> Files.exists(dir.resolve("cache/kubelet/pods/default/tls-pod")));
  }

  /** A YurtHub node's files: pki/ under a root directory and a bootstrap kubeconfig. */
  private NodeBootstrap yurtHubNode(List<String> pins) throws Exception {
    Path root = dir.resolve("yurthub");
    Path pki = Files.createDirectories(root.resolve("pki"));
    Files.writeString(pki.resolve("yurthub-current.pem"),
        Files.readString(hubCert) + Files.readString(hubKey));
    Files.writeString(pki.resolve("yurthub-server-current.pem"),
        Files.readString(serverCert) + Files.readString(serverKey));
    Path kubeconfig = Files.writeString(dir.resolve("bootstrap-hub.conf"), """
        apiVersion: v1
        kind: Config
        clusters:
        - cluster:
            certificate-authority-data: %s
            server: https://localhost:6443
          name: cluster
        contexts:
        - context:
            cluster: cluster
            user: token-bootstrap-client
          name: token-bootstrap-client@cluster
        current-context: token-bootstrap-client@cluster
        users:
        - name: token-bootstrap-client
          user:
            token: abcdef.0123456789abcdef
        """.formatted(java.util.Base64.getEncoder().encodeToString(Files.readAllBytes(ca))));
    return new NodeBootstrap(root, kubeconfig, NodeBootstrap.Mode.TOKEN, pins, true);
  }

  private static String caPin(Path caFile) throws Exception {
    var cert = CertificateFactory.getInstance("X.509").generateCertificate(
        new ByteArrayInputStream(Files.readAllBytes(caFile)));
    return "sha256:" + java.util.HexFormat.of().formatHex(java.security.MessageDigest
        .getInstance("SHA-256").digest(cert.getPublicKey().getEncoded()));
  }

  @Test
  void aYurtHubNodesRootDirAndBootstrapFileGiveTheHubItsCertificatesCaAndToken()
      throws Exception {
    EdgeHubConfig config = EdgeHubConfig
        .builder(List.of("https://localhost:" + front.port()), dir.resolve("cache"))
        .ports(0, 0, 0)
        .bootstrap(yurtHubNode(List.of(caPin(ca))))
        .build();
    hub = new EdgeHub(config, clock.timeSource(), new PrometheusRegistry()).start();
    clock.runDue();
    // The CA came from the bootstrap kubeconfig and is kept where YurtHub keeps it.
    assertThat(dir.resolve("yurthub/pki/ca.crt")).hasSameTextualContentAs(ca);
    HttpClient client = HttpClient.newBuilder().sslContext(trusting(ca))
        .version(HttpClient.Version.HTTP_1_1).build();
    // The secure port serves pki/yurthub-server-current.pem; the hub presents
    // pki/yurthub-current.pem to the API server and the bootstrap token on a request without one.
    HttpResponse<String> r = get(client, "/api/v1/namespaces/default/pods/tls-pod");
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(front.clientSubjects).isNotEmpty()
        .allSatisfy(s -> assertThat(s).contains("CN=system:node:edge-1"));
    // Not getLastRequest(): a health probe still in flight may land after the GET (seen under load).
    assertThat(takeRequest("GET", "/api/v1/namespaces/default/pods/tls-pod")
        .getHeader("Authorization")).isEqualTo("Bearer abcdef.0123456789abcdef");
  }

  /** The first recorded API server request with this method and path; fails after 10 s. */
  private io.fabric8.mockwebserver.http.RecordedRequest takeRequest(String method, String path)
      throws InterruptedException {
    while (true) {
      var r = apiServer.takeRequest(10, java.util.concurrent.TimeUnit.SECONDS);
      assertThat(r).as("a recorded %s %s", method, path).isNotNull();
      if (r.getMethod().equals(method) && r.getPath().equals(path)) {
        return r;
      }
    }
  }

  @Test
  void aCaThatMatchesNoPinnedHashStopsTheHubFromStarting() throws Exception {
    EdgeHubConfig config = EdgeHubConfig
        .builder(List.of("https://localhost:" + front.port()), dir.resolve("cache"))
        .ports(0, 0, 0)
        .bootstrap(yurtHubNode(List.of("sha256:" + "ab".repeat(32))))
        .build();
    EdgeHub pinned = new EdgeHub(config, clock.timeSource(), new PrometheusRegistry());
    assertThatThrownBy(pinned::start).isInstanceOf(java.io.IOException.class)
        .hasMessageContaining("does not match --discovery-token-ca-cert-hash")
        .hasMessageContaining(caPin(ca));
    assertThatThrownBy(pinned::proxyAddress).isInstanceOf(IllegalStateException.class);
  }

  @Test
  void aClientThatDoesNotTrustTheHubCertificateIsRefusedAtTheHandshake() throws Exception {
    startHub(hubCert, hubKey);
    HttpClient untrusting = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    assertThatThrownBy(() -> get(untrusting, "/api/v1/namespaces/default/pods/tls-pod"))
        .isInstanceOf(SSLHandshakeException.class);
    // Plain HTTP on the TLS port is no request at all.
    HttpClient plain = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    assertThatThrownBy(() -> plain.send(HttpRequest.newBuilder(URI.create(
            "http://127.0.0.1:" + hub.secureProxyAddress().getPort() + "/api/v1/pods"))
            .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString()))
        .isInstanceOf(java.io.IOException.class);
  }

  @Test
  void withoutAClientCertificateTheApiServerRefusesTheHubAndItIsMarkedUnhealthy()
      throws Exception {
    startHub(null, null);
    await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(50)).until(() -> {
      if (!hub.cloudHealthy()) {
        return true;
      }
      clock.advance(Duration.ofSeconds(10));
      return false;
    });
    assertThat(front.failedHandshakes).isNotEmpty();
    assertThat(front.clientSubjects).isEmpty();
    HttpClient client = HttpClient.newBuilder().sslContext(trusting(ca))
        .version(HttpClient.Version.HTTP_1_1).build();
    HttpResponse<String> r = get(client, "/api/v1/namespaces/default/pods/tls-pod");
    assertThat(r.statusCode()).isEqualTo(404); // nothing cached: the hub never reached the server
    assertThat(r.body()).contains("not found in the hub cache");
  }
}
