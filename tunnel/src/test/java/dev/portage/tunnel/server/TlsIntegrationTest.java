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
import javax.net.ssl.X509TrustManager;
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
    return start(mode, List.of());
  }

  private TunnelServer start(FrontendMode mode, List<String> keyExchangeGroups) throws Exception {
    pki = new TestPki(dir);
    TunnelServerConfig config = TunnelServerConfig.builder().ephemeralPorts().serverId("tls-server")
        .mode(mode)
        .keyExchangeGroups(keyExchangeGroups)
        .frontendTls(new TlsFiles(pki.serverCert, pki.serverKey, null))
        .agentTls(new TlsFiles(pki.serverCert, pki.serverKey, pki.caCert))
        .tlsMinVersion("VersionTLS12")
        .build();
    server = TunnelServer.builder(config).build().start();
    return server;
  }

  private ManagedChannel tlsChannel(int port, boolean clientCert) throws Exception {
    return tlsChannel(port, clientCert, TlsOptions.defaults());
  }

  private ManagedChannel tlsChannel(int port, boolean clientCert, TlsOptions options) throws Exception {
    var b = TlsContexts.clientBuilder(pki.caCert, clientCert ? pki.clientCert : null,
        clientCert ? pki.clientKey : null, options);
    ManagedChannel ch = NettyChannelBuilder.forAddress("localhost", port)
        .sslContext(TlsContexts.withKeyExchangeGroups(
            GrpcSslContexts.configure(b, TlsContexts.provider()).build(), options))
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
      SSLContext ctx = SSLContext.getInstance("TLS");
      ctx.init(null, new javax.net.ssl.TrustManager[] {caTrustManager()}, null);
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

  @Test
  void everyTlsListenerAcceptsOnlyTheConfiguredKeyExchangeGroups() throws Exception {
    start(FrontendMode.HTTP_CONNECT, List.of("X25519"));
    TlsOptions p384 = TlsOptions.defaults().withKeyExchangeGroups(List.of("CurveP384"));
    TlsOptions x25519 = TlsOptions.defaults().withKeyExchangeGroups(List.of("x25519"));

    // Agent listener (gRPC, mTLS).
    try (TestStream agent = TestStream.agent(tlsChannel(server.agentPort(), true, p384), agentHeaders())) {
      assertThat(agent.awaitCloseWithoutPackets().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    }
    try (TestStream agent = TestStream.agent(tlsChannel(server.agentPort(), true, x25519), agentHeaders())) {
      assertThat(agent.awaitHeaders().get(Metadata.SERVER_ID)).isEqualTo("tls-server");
    }

    // HTTP CONNECT frontend.
    int port = ((InetSocketAddress) server.frontendAddress()).getPort();
    assertThat(frontendHandshake(port, "secp384r1")).isInstanceOf(javax.net.ssl.SSLException.class);
    assertThat(frontendHandshake(port, "x25519")).isNull();
  }

  /** A JDK client handshake offering only {@code group}; the failure, or null on success. */
  private Exception frontendHandshake(int port, String group) throws Exception {
    SSLContext ctx = SSLContext.getInstance("TLS");
    ctx.init(null, new javax.net.ssl.TrustManager[] {caTrustManager()}, null);
    try (SSLSocket s = (SSLSocket) ctx.getSocketFactory().createSocket("localhost", port)) {
      s.setSoTimeout(10_000);
      javax.net.ssl.SSLParameters parameters = s.getSSLParameters();
      parameters.setNamedGroups(new String[] {group});
      s.setSSLParameters(parameters);
      s.startHandshake();
      return null;
    } catch (javax.net.ssl.SSLException e) {
      return e;
    }
  }

  @Test
  void frontendsResumeTlsSessions() throws Exception {
    start(FrontendMode.HTTP_CONNECT);
    InetSocketAddress connect = (InetSocketAddress) server.frontendAddress();
    byte[] request = "CONNECT 10.0.0.5:443 HTTP/1.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII); // 500: no agent
    assertThat(handshakesVerifyingTheServer(connect.getPort(), request, 3)).containsExactly(1, 0, 0);
  }

  @Test
  void grpcFrontendResumesTlsSessions() throws Exception {
    start(FrontendMode.GRPC);
    // The HTTP/2 preface and an empty SETTINGS frame: the server answers with its SETTINGS.
    byte[] preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
    byte[] request = java.util.Arrays.copyOf(preface, preface.length + 9);
    request[preface.length + 3] = 4; // frame type SETTINGS, length 0, flags 0, stream 0
    assertThat(handshakesVerifyingTheServer(server.serverPort(), request, 2)).containsExactly(1, 0);
  }

  /**
   * Opens {@code n} TLS connections to {@code port} one after another with one client context (BoringSSL
   * when it loads, with its client session cache), each sending {@code request} and waiting for the first
   * bytes of the answer (TLS 1.3 session tickets come before them), and returns, per connection, how many
   * times the client verified the server's certificate: 0 means the session was resumed (no certificate
   * was sent).
   */
  private List<Integer> handshakesVerifyingTheServer(int port, byte[] request, int n) throws Exception {
    java.util.concurrent.atomic.AtomicInteger verified = new java.util.concurrent.atomic.AtomicInteger();
    X509TrustManager ca = caTrustManager();
    X509TrustManager counting = new javax.net.ssl.X509ExtendedTrustManager() {
      @Override
      public void checkServerTrusted(java.security.cert.X509Certificate[] chain, String authType)
          throws java.security.cert.CertificateException {
        verified.incrementAndGet();
        ca.checkServerTrusted(chain, authType);
      }

      @Override
      public void checkServerTrusted(java.security.cert.X509Certificate[] chain, String authType, java.net.Socket s)
          throws java.security.cert.CertificateException {
        checkServerTrusted(chain, authType);
      }

      @Override
      public void checkServerTrusted(java.security.cert.X509Certificate[] chain, String authType,
          javax.net.ssl.SSLEngine e) throws java.security.cert.CertificateException {
        checkServerTrusted(chain, authType);
      }

      @Override
      public void checkClientTrusted(java.security.cert.X509Certificate[] chain, String authType) {
        throw new UnsupportedOperationException();
      }

      @Override
      public void checkClientTrusted(java.security.cert.X509Certificate[] chain, String authType, java.net.Socket s) {
        throw new UnsupportedOperationException();
      }

      @Override
      public void checkClientTrusted(java.security.cert.X509Certificate[] chain, String authType,
          javax.net.ssl.SSLEngine e) {
        throw new UnsupportedOperationException();
      }

      @Override
      public java.security.cert.X509Certificate[] getAcceptedIssuers() {
        return ca.getAcceptedIssuers();
      }
    };
    io.netty.handler.ssl.SslContext client = io.netty.handler.ssl.SslContextBuilder.forClient()
        .sslProvider(TlsContexts.provider()).trustManager(counting)
        .applicationProtocolConfig(new io.netty.handler.ssl.ApplicationProtocolConfig(
            io.netty.handler.ssl.ApplicationProtocolConfig.Protocol.ALPN,
            io.netty.handler.ssl.ApplicationProtocolConfig.SelectorFailureBehavior.NO_ADVERTISE,
            io.netty.handler.ssl.ApplicationProtocolConfig.SelectedListenerFailureBehavior.ACCEPT, "h2", "http/1.1"))
        .build();
    io.netty.channel.EventLoopGroup group = dev.portage.core.net.NettyTransport.NIO.newEventLoopGroup(1, "tls-test");
    List<Integer> out = new ArrayList<>();
    try {
      for (int i = 0; i < n; i++) {
        int before = verified.get();
        java.util.concurrent.CompletableFuture<Void> answered = new java.util.concurrent.CompletableFuture<>();
        io.netty.channel.Channel ch = new io.netty.bootstrap.Bootstrap().group(group)
            .channel(dev.portage.core.net.NettyTransport.NIO.channelType())
            .handler(new io.netty.channel.ChannelInitializer<>() {
              @Override
              protected void initChannel(io.netty.channel.Channel c) {
                // host and port name the session in the client's cache
                c.pipeline().addLast(client.newHandler(c.alloc(), "localhost", port));
                c.pipeline().addLast(new io.netty.channel.ChannelInboundHandlerAdapter() {
                  @Override
                  public void channelRead(io.netty.channel.ChannelHandlerContext ctx, Object msg) {
                    io.netty.util.ReferenceCountUtil.release(msg);
                    answered.complete(null);
                  }
                });
              }
            })
            .connect("localhost", port).sync().channel();
        ch.pipeline().get(io.netty.handler.ssl.SslHandler.class).handshakeFuture().sync();
        ch.writeAndFlush(io.netty.buffer.Unpooled.wrappedBuffer(request)).sync();
        answered.get(10, TimeUnit.SECONDS);
        ch.close().sync();
        out.add(verified.get() - before);
      }
    } finally {
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
      io.netty.util.ReferenceCountUtil.release(client);
    }
    return out;
  }

  private X509TrustManager caTrustManager() throws Exception {
    TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    java.security.KeyStore ks = java.security.KeyStore.getInstance("PKCS12");
    ks.load(null, null);
    try (InputStream in = java.nio.file.Files.newInputStream(pki.caCert)) {
      ks.setCertificateEntry("ca", java.security.cert.CertificateFactory.getInstance("X.509").generateCertificate(in));
    }
    tmf.init(ks);
    return (X509TrustManager) tmf.getTrustManagers()[0];
  }
}
