package dev.portage.tunnel.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.portage.core.time.FakeClock;
import io.grpc.netty.GrpcSslContexts;
import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import io.netty.pkitesting.CertificateBuilder;
import io.netty.pkitesting.X509Bundle;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The agent's TLS: server verification against --ca-cert, mTLS client certificates, ALPN. */
class TunnelAgentTlsIntegrationTest {
  private static X509Bundle ca;
  private static X509Bundle otherCa;
  private static X509Bundle serverCert;
  private static X509Bundle agentCert;

  private final FakeClock clock = new FakeClock();
  private TestProxyServer server;
  private TunnelAgent agent;

  @BeforeAll
  static void issueCertificates() throws Exception {
    ca = new CertificateBuilder().subject("CN=cluster-ca").setIsCertificateAuthority(true).buildSelfSigned();
    otherCa = new CertificateBuilder().subject("CN=other-ca").setIsCertificateAuthority(true).buildSelfSigned();
    serverCert = new CertificateBuilder()
        .subject("CN=konnectivity-server")
        .addSanIpAddress("127.0.0.1")
        .addSanDnsName("localhost")
        .addExtendedKeyUsageServerAuth()
        .buildIssuedBy(ca);
    agentCert = new CertificateBuilder()
        .subject("CN=konnectivity-agent")
        .addExtendedKeyUsageClientAuth()
        .buildIssuedBy(ca);
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

  private static SslContext serverTls(boolean requireClientCert) throws Exception {
    var b = GrpcSslContexts.configure(
        SslContextBuilder.forServer(serverCert.toTempCertChainPem(), serverCert.toTempPrivateKeyPem()),
        SslProvider.JDK);
    if (requireClientCert) {
      b.trustManager(ca.toTempRootCertPem()).clientAuth(ClientAuth.REQUIRE);
    }
    return b.build();
  }

  private TunnelAgentConfig.Builder config() throws Exception {
    return TunnelAgentConfig.builder()
        .proxyServerHost("127.0.0.1")
        .proxyServerPort(server.port())
        .healthServerPort(-1)
        .adminServerPort(-1)
        .caCert(ca.toTempRootCertPem().toPath());
  }

  private void start(TunnelAgentConfig cfg) throws Exception {
    agent = new TunnelAgent(cfg, clock.timeSource(), new PrometheusRegistry()).start();
  }

  private void driveUntilConnected() {
    await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20)).until(() -> {
      clock.advance(Duration.ofMillis(250));
      return agent.connectedServers() == 1;
    });
  }

  /** Runs a few sync attempts; none may produce a stream on the server. */
  private void assertNeverConnects() throws Exception {
    for (int i = 0; i < 3; i++) {
      await().atMost(Duration.ofSeconds(10)).until(() -> clock.pendingTasks() == 2); // probe + next sync
      clock.advance(clock.nextDeadline());
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> clock.pendingTasks() == 2);
    assertThat(agent.connectedServers()).isZero();
    assertThat(server.streams()).isEmpty();
  }

  @Test
  void agentLinkUsesBoringSslWhereItLoads() throws Exception {
    server = new TestProxyServer(() -> "tls-server", 1, 0, serverTls(false));
    // netty-tcnative (linux-x86_64) is on this build's class path: the agent must not fall back to the JDK.
    assertThat(io.netty.handler.ssl.OpenSsl.isAvailable()).as("netty-tcnative loads").isTrue();
    SslContext context = AgentTls.clientContext(config().build());
    try {
      assertThat(context).isInstanceOf(io.netty.handler.ssl.OpenSslContext.class);
      assertThat(context.applicationProtocolNegotiator().protocols()).containsExactly("h2");
    } finally {
      io.netty.util.ReferenceCountUtil.release(context);
    }
  }

  @Test
  void connectsWithMutualTls() throws Exception {
    server = new TestProxyServer(() -> "tls-server", 1, 0, serverTls(true));
    Path cert = agentCert.toTempCertChainPem().toPath();
    Path key = agentCert.toTempPrivateKeyPem().toPath();
    start(config().agentCert(cert).agentKey(key).build());

    driveUntilConnected();
    assertThat(server.nextStream().header(dev.portage.tunnel.wire.Metadata.AGENT_ID)).isNotEmpty();
  }

  @Test
  void serverSignedByAnotherCaIsRejected() throws Exception {
    server = new TestProxyServer(() -> "tls-server", 1, 0, serverTls(false));
    start(config().caCert(otherCa.toTempRootCertPem().toPath()).probeInterval(Duration.ofHours(1)).build());
    assertNeverConnects();
  }

  @Test
  void agentWithoutClientCertificateIsRejectedByAnMtlsServer() throws Exception {
    server = new TestProxyServer(() -> "tls-server", 1, 0, serverTls(true));
    start(config().probeInterval(Duration.ofHours(1)).build());
    assertNeverConnects();
  }

  /** A server that accepts only P-384 for the key exchange. */
  private static SslContext p384OnlyServerTls() throws Exception {
    return dev.portage.core.net.TlsContexts.withKeyExchangeGroups(
        serverTls(false),
        dev.portage.core.net.TlsOptions.defaults().withKeyExchangeGroups(List.of("secp384r1")));
  }

  @Test
  void agentLinkOffersTheConfiguredKeyExchangeGroups() throws Exception {
    server = new TestProxyServer(() -> "tls-server", 1, 0, p384OnlyServerTls());
    start(config().keyExchangeGroups(List.of("CurveP384")).build());
    driveUntilConnected();
  }

  @Test
  void agentLinkWithoutACommonKeyExchangeGroupNeverConnects() throws Exception {
    server = new TestProxyServer(() -> "tls-server", 1, 0, p384OnlyServerTls());
    start(config().keyExchangeGroups(List.of("X25519")).probeInterval(Duration.ofHours(1)).build());
    assertNeverConnects();
  }

  @Test
  void alpnProtocolsAreOfferedAlongsideH2() throws Exception {
    server = new TestProxyServer(() -> "tls-server", 1, 0, serverTls(false));
    start(config().alpnProtos(List.of("konnectivity")).build());
    driveUntilConnected();
  }
}
