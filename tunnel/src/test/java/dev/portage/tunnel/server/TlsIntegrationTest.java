package dev.portage.tunnel.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.portage.api.konnectivity.Packet;
import dev.portage.api.konnectivity.PacketType;
import dev.portage.core.net.TlsContexts;
import dev.portage.core.net.TlsOptions;
import dev.portage.tunnel.wire.Metadata;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.NettyChannelBuilder;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TlsIntegrationTest {
  @TempDir Path dir;
  private TestPki pki;
  private TunnelServer server;
  private final List<ManagedChannel> channels = new ArrayList<>();

  @AfterEach
  void tearDown() throws Exception {
    for (ManagedChannel ch : channels) {
      ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    server.close();
  }

  private TunnelServer start(FrontendMode mode) throws Exception {
    pki = new TestPki(dir);
    TunnelServerConfig config = TunnelServerConfig.builder().ephemeralPorts().serverId("tls-server")
        .mode(mode)
        .frontendTls(new TlsFiles(pki.serverCert, pki.serverKey, null))
        .agentTls(new TlsFiles(pki.serverCert, pki.serverKey, pki.caCert))
        .tlsMinVersion("VersionTLS12")
        .build();
    server = TunnelServer.builder(config).build().start();
    return server;
  }

  private ManagedChannel tlsChannel(int port, boolean clientCert) throws Exception {
    var b = TlsContexts.clientBuilder(pki.caCert, clientCert ? pki.clientCert : null,
        clientCert ? pki.clientKey : null, TlsOptions.defaults());
    ManagedChannel ch = NettyChannelBuilder.forAddress("localhost", port)
        .sslContext(GrpcSslContexts.configure(b, TlsContexts.provider()).build())
        .build();
    channels.add(ch);
    return ch;
  }

  private static io.grpc.Metadata agentHeaders() {
    io.grpc.Metadata md = new io.grpc.Metadata();
    md.put(Metadata.AGENT_ID, "agent-a");
    return md;
  }

  @Test
  void mutualTlsAgentAndTlsGrpcFrontendRoundTrip() throws Exception {
    start(FrontendMode.GRPC);
    try (TestStream agent = TestStream.agent(tlsChannel(server.agentPort(), true), agentHeaders());
        TestStream f = TestStream.frontend(tlsChannel(server.serverPort(), false))) {
      assertThat(agent.awaitHeaders().get(Metadata.SERVER_ID)).isEqualTo("tls-server");
      f.send(Packets.dialReq("10.0.0.5:443", 1));
      agent.nextPacket(PacketType.DIAL_REQ);
      agent.send(Packets.dialRsp(1, 1));
      assertThat(f.nextPacket(PacketType.DIAL_RSP).getDialResponse().getConnectID()).isEqualTo(1);
    }
  }

  @Test
  void agentWithoutClientCertificateIsRefused() throws Exception {
    start(FrontendMode.GRPC);
    try (TestStream agent = TestStream.agent(tlsChannel(server.agentPort(), false), agentHeaders())) {
      Status s = agent.awaitCloseWithoutPackets();
      assertThat(s.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    }
    assertThat(server.ready()).isFalse();
  }

  @Test
  void httpConnectOverTls() throws Exception {
    start(FrontendMode.HTTP_CONNECT);
    try (TestStream agent = TestStream.agent(tlsChannel(server.agentPort(), true), agentHeaders())) {
      agent.awaitHeaders();
      TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      java.security.KeyStore ks = java.security.KeyStore.getInstance("PKCS12");
      ks.load(null, null);
      try (InputStream in = java.nio.file.Files.newInputStream(pki.caCert)) {
        ks.setCertificateEntry("ca", java.security.cert.CertificateFactory.getInstance("X.509").generateCertificate(in));
      }
      tmf.init(ks);
      SSLContext ctx = SSLContext.getInstance("TLS");
      ctx.init(null, tmf.getTrustManagers(), null);
      int port = ((InetSocketAddress) server.frontendAddress()).getPort();
      try (SSLSocket s = (SSLSocket) ctx.getSocketFactory().createSocket("localhost", port)) {
        s.setSoTimeout(10_000);
        s.getOutputStream().write("CONNECT 10.0.0.5:443 HTTP/1.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        s.getOutputStream().flush();
        Packet req = agent.nextPacket(PacketType.DIAL_REQ);
        agent.send(Packets.dialRsp(req.getDialRequest().getRandom(), 4));
        assertThat(new String(s.getInputStream().readNBytes(39), StandardCharsets.US_ASCII))
            .isEqualTo("HTTP/1.1 200 Connection Established\r\n\r\n");
        agent.send(Packets.data(4, "secret".getBytes(StandardCharsets.UTF_8)));
        assertThat(new String(s.getInputStream().readNBytes(6), StandardCharsets.UTF_8)).isEqualTo("secret");
      }
    }
  }
}
