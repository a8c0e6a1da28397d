package dev.portage.proxy;

import dev.portage.control.ControlPlane;
import dev.portage.control.ControlPlaneConfig;
import dev.portage.core.time.TimeSource;
import io.netty.pkitesting.CertificateBuilder;
import io.netty.pkitesting.X509Bundle;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

/**
 * A real {@code portage control-plane} (files source) whose gRPC port speaks TLS with a throwaway PKI
 * written as PEM files: a CA, the control plane's certificate for {@code localhost}, a client
 * certificate the CA signed and one from another CA. With {@code mutual} it requires client
 * certificates. The proxies' tests connect to it the way a deployment would.
 */
public final class TlsControlPlane implements AutoCloseable {

  public final Path dir;
  public final Path ca;
  public final Path clientCert;
  public final Path clientKey;
  public final Path strangerCert;
  public final Path strangerKey;
  public final ControlPlane plane;
  private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(
      r -> Thread.ofPlatform().daemon().name("tls-control-plane-timer").unstarted(r));

  /** Starts a control plane on 127.0.0.1 (ephemeral ports) serving the manifests in {@code dir}/manifests. */
  public TlsControlPlane(Path dir, boolean mutual) throws Exception {
    this.dir = dir;
    Instant now = Instant.now().truncatedTo(ChronoUnit.SECONDS);
    CertificateBuilder base = new CertificateBuilder()
        .notBefore(now.minus(1, ChronoUnit.HOURS)).notAfter(now.plus(1, ChronoUnit.DAYS)).ecp256();
    X509Bundle caBundle = base.copy().subject("CN=control-plane-ca").setIsCertificateAuthority(true).buildSelfSigned();
    X509Bundle server = base.copy().subject("CN=localhost").addSanDnsName("localhost")
        .addExtendedKeyUsageServerAuth().buildIssuedBy(caBundle);
    X509Bundle client = base.copy().subject("CN=proxy").addExtendedKeyUsageClientAuth().buildIssuedBy(caBundle);
    X509Bundle otherCa = base.copy().subject("CN=other-ca").setIsCertificateAuthority(true).buildSelfSigned();
    X509Bundle stranger = base.copy().subject("CN=stranger").addExtendedKeyUsageClientAuth().buildIssuedBy(otherCa);
    ca = write("ca.crt", caBundle.getCertificatePEM());
    Path serverCert = write("server.crt", server.getCertificatePathPEM());
    Path serverKey = write("server.key", server.getPrivateKeyPEM());
    clientCert = write("client.crt", client.getCertificatePathPEM());
    clientKey = write("client.key", client.getPrivateKeyPEM());
    strangerCert = write("stranger.crt", stranger.getCertificatePathPEM());
    strangerKey = write("stranger.key", stranger.getPrivateKeyPEM());
    Path manifests = Files.createDirectories(dir.resolve("manifests"));
    plane = new ControlPlane(ControlPlaneConfig.builder()
        .dir(manifests)
        .grpcBindAddress("127.0.0.1").grpcPort(0).adminPort(0)
        .tls(serverCert, serverKey, mutual ? ca : null)
        .build(), TimeSource.system(timer), new PrometheusRegistry());
    plane.start();
  }

  /** {@code 127.0.0.1:port} of the gRPC port (its certificate names {@code localhost}). */
  public String address() {
    return "127.0.0.1:" + plane.grpcAddress().getPort();
  }

  /**
   * Writes a Service {@code name} in {@code default} on port 8080 with one ready endpoint,
   * 127.0.0.1:{@code port}, and waits until the control plane has loaded both objects.
   */
  public void service(String name, int port) throws IOException {
    int before = plane.store().size();
    write("manifests/" + name + ".yaml", """
        apiVersion: v1
        kind: Service
        metadata: {name: %1$s, namespace: default}
        spec:
          ports: [{name: http, port: 8080, protocol: TCP}]
        ---
        apiVersion: discovery.k8s.io/v1
        kind: EndpointSlice
        metadata: {name: %1$s-a, namespace: default, labels: {kubernetes.io/service-name: %1$s}}
        addressType: IPv4
        endpoints: [{addresses: ["127.0.0.1"], conditions: {ready: true}}]
        ports: [{name: http, port: %2$d, protocol: TCP}]
        """.formatted(name, port));
    org.awaitility.Awaitility.await().atMost(10, java.util.concurrent.TimeUnit.SECONDS)
        .until(() -> plane.store().size() == before + 2);
  }

  private Path write(String name, String text) throws IOException {
    return Files.writeString(dir.resolve(name), text);
  }

  @Override
  public void close() {
    plane.close();
    timer.shutdownNow();
  }
}
