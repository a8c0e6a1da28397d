package dev.portage.core.net;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.ssl.OpenSslEngine;
import io.netty.handler.ssl.OpenSslSession;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslProvider;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.ReferenceCounted;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLHandshakeException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** TLS handshakes and echo over loopback with contexts from {@link TlsContexts}. */
class TlsIntegrationTest {

  @TempDir static Path dir;
  private static TestPki pki;
  private EventLoopGroup group;
  private Channel server;

  /** Outcome of the server side of the latest handshake. */
  private volatile CompletableFuture<Channel> serverHandshake;
  /** Read when the handshake completes: the channel (and its SslHandler) may be gone by the time we look. */
  private volatile CompletableFuture<String> serverPeerName = new CompletableFuture<>();
  /** The engine of the latest accepted connection. */
  private volatile javax.net.ssl.SSLEngine serverEngine;
  /** Completed when the next accepted connection's pipeline has been torn down. */
  private volatile CompletableFuture<Void> serverTornDown = new CompletableFuture<>();

  @BeforeAll
  static void createPki() throws Exception {
    pki = new TestPki(dir);
  }

  @BeforeEach
  void setUp() {
    group = NettyTransport.best().newEventLoopGroup(1, "tls-test");
  }

  @AfterEach
  void tearDown() throws Exception {
    if (server != null) {
      server.close().sync();
    }
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
  }

  @Test
  void echoesOverTlsWithServerAuthentication() throws Exception {
    startServer(TlsContexts.server(pki.serverCert, pki.serverKey, null));

    Exchange exchange = exchange(TlsContexts.client(pki.caCert, null, null), "localhost");

    assertThat(exchange.reply()).isEqualTo("hello");
    assertThat(exchange.ssl.engine().getSession().getProtocol()).isEqualTo("TLSv1.3");
    assertThat(serverHandshake.get(10, TimeUnit.SECONDS)).isNotNull();
  }

  @Test
  void mutualTlsAcceptsAClientCertificateSignedByTheCa() throws Exception {
    startServer(TlsContexts.server(pki.serverCert, pki.serverKey, pki.caCert));

    Exchange exchange =
        exchange(TlsContexts.client(pki.caCert, pki.clientCert, pki.clientKey), "localhost");

    assertThat(exchange.reply()).isEqualTo("hello");
    assertThat(serverPeer()).isEqualTo("CN=agent-1");
  }

  @Test
  void mutualTlsRejectsAClientWithoutCertificate() throws Exception {
    startServer(TlsContexts.server(pki.serverCert, pki.serverKey, pki.caCert));

    Exchange exchange = exchange(TlsContexts.client(pki.caCert, null, null), "localhost");

    assertThat(exchange.replyFailure()).isNotNull();
    assertThat(serverHandshakeFailure()).isInstanceOf(SSLHandshakeException.class);
  }

  @Test
  void mutualTlsRejectsAClientCertificateFromAnotherCa() throws Exception {
    startServer(TlsContexts.server(pki.serverCert, pki.serverKey, pki.caCert));

    Exchange exchange =
        exchange(TlsContexts.client(pki.caCert, pki.strangerCert, pki.strangerKey), "localhost");

    assertThat(exchange.replyFailure()).isNotNull();
    assertThat(serverHandshakeFailure()).isInstanceOf(SSLHandshakeException.class);
  }

  @Test
  void clientRejectsAServerFromAnUntrustedCa() throws Exception {
    startServer(TlsContexts.server(pki.serverCert, pki.serverKey, null));

    Exchange exchange = exchange(TlsContexts.client(pki.otherCaCert, null, null), "localhost");

    assertThat(exchange.handshakeFailure()).isInstanceOf(SSLHandshakeException.class);
  }

  @Test
  void clientRejectsAServerCertificateForAnotherName() throws Exception {
    startServer(TlsContexts.server(pki.serverCert, pki.serverKey, null));

    Exchange exchange = exchange(TlsContexts.client(pki.caCert, null, null), "api.example.com");

    assertThat(exchange.handshakeFailure()).isInstanceOf(SSLHandshakeException.class);
  }

  @Test
  void serverWithMinimumTls13RefusesATls12Client() throws Exception {
    startServer(
        TlsContexts.server(
            pki.serverCert,
            pki.serverKey,
            null,
            TlsOptions.defaults().withMinVersion("VersionTLS13")));
    SslContext tls12Only =
        TlsContexts.clientBuilder(pki.caCert, null, null, TlsOptions.defaults())
            .protocols("TLSv1.2")
            .build();

    Exchange exchange = exchange(tls12Only, "localhost");

    assertThat(exchange.handshakeFailure()).isInstanceOf(SSLHandshakeException.class);
  }

  @Test
  void tls12UsesTheConfiguredCipherSuite() throws Exception {
    String suite = "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384";
    startServer(
        TlsContexts.server(
            pki.serverCert,
            pki.serverKey,
            null,
            TlsOptions.defaults().withCipherSuites(List.of(suite))));
    SslContext tls12Only =
        TlsContexts.clientBuilder(pki.caCert, null, null, TlsOptions.defaults())
            .protocols("TLSv1.2")
            .build();

    Exchange exchange = exchange(tls12Only, "localhost");

    assertThat(exchange.reply()).isEqualTo("hello");
    assertThat(exchange.ssl.engine().getSession().getProtocol()).isEqualTo("TLSv1.2");
    assertThat(exchange.ssl.engine().getSession().getCipherSuite()).isEqualTo(suite);
  }

  @Test
  void alpnNegotiatesTheFirstCommonProtocol() throws Exception {
    startServer(
        TlsContexts.server(
            pki.serverCert,
            pki.serverKey,
            null,
            TlsOptions.defaults().withAlpnProtocols(List.of("h2", "http/1.1"))));

    Exchange exchange =
        exchange(
            TlsContexts.client(
                pki.caCert,
                null,
                null,
                TlsOptions.defaults().withAlpnProtocols(List.of("http/1.1"))),
            "localhost");

    assertThat(exchange.reply()).isEqualTo("hello");
    assertThat(exchange.ssl.applicationProtocol()).isEqualTo("http/1.1");
  }

  @Test
  void openSslNegotiatesThePostQuantumHybridByDefault() throws Exception {
    assumeTrue(TlsContexts.provider() == SslProvider.OPENSSL, "OpenSSL provider");
    startServer(TlsContexts.server(pki.serverCert, pki.serverKey, null));

    Exchange exchange = exchange(TlsContexts.client(pki.caCert, null, null), "localhost");

    assertThat(exchange.reply()).isEqualTo("hello");
    assertThat(namedGroup(exchange)).isEqualTo("X25519MLKEM768");
  }

  @Test
  void negotiatedGroupFollowsTheServersKeyExchangeGroups() throws Exception {
    assumeTrue(TlsContexts.provider() == SslProvider.OPENSSL, "OpenSSL provider");
    startServer(
        TlsContexts.server(
            pki.serverCert,
            pki.serverKey,
            null,
            TlsOptions.defaults().withKeyExchangeGroups(List.of("x25519", "CurveP256"))));
    SslContext client = TlsContexts.client(pki.caCert, null, null);

    Exchange exchange = exchange(client, "localhost");

    assertThat(exchange.reply()).isEqualTo("hello");
    // The client offers X25519MLKEM768 first; the server allows only x25519 and P-256.
    assertThat(namedGroup(exchange)).isEqualTo("X25519");
  }

  @Test
  void negotiatedGroupFollowsTheClientsKeyExchangeGroups() throws Exception {
    assumeTrue(TlsContexts.provider() == SslProvider.OPENSSL, "OpenSSL provider");
    startServer(TlsContexts.server(pki.serverCert, pki.serverKey, null));
    SslContext client =
        TlsContexts.client(
            pki.caCert,
            null,
            null,
            TlsOptions.defaults().withKeyExchangeGroups(List.of("secp384r1")));

    Exchange exchange = exchange(client, "localhost");

    assertThat(exchange.reply()).isEqualTo("hello");
    assertThat(namedGroup(exchange)).isEqualTo("P-384");
  }

  @Test
  void handshakeFailsWithoutACommonKeyExchangeGroup() throws Exception {
    startServer(
        TlsContexts.server(
            pki.serverCert,
            pki.serverKey,
            null,
            TlsOptions.defaults().withKeyExchangeGroups(List.of("P-384"))));
    SslContext client =
        TlsContexts.client(
            pki.caCert, null, null, TlsOptions.defaults().withKeyExchangeGroups(List.of("X25519")));

    Exchange exchange = exchange(client, "localhost");

    assertThat(exchange.handshakeFailure()).isInstanceOf(SSLHandshakeException.class);
  }

  @Test
  void jdkContextsApplyKeyExchangeGroupsPerEngine() throws Exception {
    TlsOptions p384 = TlsOptions.defaults().withKeyExchangeGroups(List.of("CurveP384"));
    SslContext jdkServer =
        TlsContexts.withKeyExchangeGroups(
            SslContextBuilder.forServer(
                    PemFiles.privateKey(pki.serverKey, "key"),
                    PemFiles.certificates(pki.serverCert, "cert"))
                .sslProvider(SslProvider.JDK)
                .build(),
            p384);
    startServer(jdkServer);
    SslContext jdkClient =
        SslContextBuilder.forClient()
            .sslProvider(SslProvider.JDK)
            .trustManager(PemFiles.certificates(pki.caCert, "ca"))
            .build();

    Exchange agreeing = exchange(TlsContexts.withKeyExchangeGroups(jdkClient, p384), "localhost");
    assertThat(agreeing.reply()).isEqualTo("hello");
    assertThat(agreeing.ssl.engine().getSSLParameters().getNamedGroups()).containsExactly("secp384r1");
    assertThat(serverEngine.getSSLParameters().getNamedGroups()).containsExactly("secp384r1");

    TlsOptions x25519 = TlsOptions.defaults().withKeyExchangeGroups(List.of("x25519"));
    Exchange disagreeing = exchange(TlsContexts.withKeyExchangeGroups(jdkClient, x25519), "localhost");
    // The JDK reports the missing common group as a protocol error rather than a handshake failure.
    assertThat(disagreeing.handshakeFailure()).isInstanceOf(javax.net.ssl.SSLException.class);
  }

  /** The group the client's session negotiated, as BoringSSL names it. */
  private static String namedGroup(Exchange exchange) {
    return ((OpenSslSession) exchange.ssl.engine().getSession()).getNamedGroup();
  }

  @Test
  void ownedServerContextFreesEachEngineWhenItsConnectionCloses() throws Exception {
    SslContext owned = TlsContexts.ownedServer(pki.serverCert, pki.serverKey, null, TlsOptions.defaults());
    try {
      startServer(owned);
      SslContext client = TlsContexts.client(pki.caCert, null, null);
      for (int i = 0; i < 20; i++) {
        CompletableFuture<Void> tornDown = new CompletableFuture<>();
        serverTornDown = tornDown;
        assertThat(exchange(client, "localhost").reply()).isEqualTo("hello");
        tornDown.get(10, TimeUnit.SECONDS);
        if (owned instanceof ReferenceCounted counted) {
          // The connection's engine held the context; its SslHandler freed it when the pipeline ended.
          assertThat(counted.refCnt()).as("references after connection %d", i).isEqualTo(1);
        }
      }
      if (TlsContexts.provider() == SslProvider.OPENSSL) {
        // Not Netty's finalizable OpenSslEngine: nothing per connection waits for the finalizer thread.
        assertThat(serverEngine).isNotInstanceOf(OpenSslEngine.class).isInstanceOf(ReferenceCounted.class);
      }
    } finally {
      ReferenceCountUtil.release(owned);
    }
    if (owned instanceof ReferenceCounted counted) {
      assertThat(counted.refCnt()).isZero();
    }
  }

  private void startServer(SslContext context) throws InterruptedException {
    serverHandshake = new CompletableFuture<>();
    serverPeerName = new CompletableFuture<>();
    server =
        new ServerBootstrap()
            .group(group)
            .channel(NettyTransport.best().serverChannelType())
            .childHandler(
                new ChannelInitializer<>() {
                  @Override
                  protected void initChannel(Channel ch) {
                    SslHandler ssl = context.newHandler(ch.alloc());
                    serverEngine = ssl.engine();
                    CompletableFuture<Void> tornDown = serverTornDown;
                    // Nearer the head than the SslHandler, so removed after it when the pipeline ends.
                    ch.pipeline().addLast(new io.netty.channel.ChannelHandlerAdapter() {
                      @Override
                      public void handlerRemoved(ChannelHandlerContext ctx) {
                        tornDown.complete(null);
                      }
                    });
                    CompletableFuture<Channel> outcome = serverHandshake;
                    CompletableFuture<String> peerName = serverPeerName;
                    ssl.handshakeFuture()
                        .addListener(
                            f -> {
                              if (f.isSuccess()) {
                                try {
                                  peerName.complete(ssl.engine().getSession().getPeerPrincipal().getName());
                                } catch (javax.net.ssl.SSLPeerUnverifiedException e) {
                                  peerName.complete(null);
                                }
                                outcome.complete(ch);
                              } else {
                                outcome.completeExceptionally(f.cause());
                              }
                            });
                    ch.pipeline().addLast(ssl, new Echo());
                  }
                })
            .bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
            .sync()
            .channel();
  }

  private String serverPeer() throws Exception {
    return serverPeerName.get(10, TimeUnit.SECONDS);
  }

  private Throwable serverHandshakeFailure() throws Exception {
    try {
      serverHandshake.get(10, TimeUnit.SECONDS);
      throw new AssertionError("server handshake succeeded");
    } catch (ExecutionException e) {
      return e.getCause();
    }
  }

  /** One client connection that sends "hello" after its handshake and waits for the echo. */
  private final class Exchange {
    final SslHandler ssl;
    final CompletableFuture<String> reply = new CompletableFuture<>();
    final Channel channel;

    Exchange(SslContext context, String host) throws InterruptedException {
      int port = ((InetSocketAddress) server.localAddress()).getPort();
      ssl = context.newHandler(io.netty.buffer.ByteBufAllocator.DEFAULT, host, port);
      channel =
          new Bootstrap()
              .group(group)
              .channel(NettyTransport.best().channelType())
              .handler(
                  new ChannelInitializer<>() {
                    @Override
                    protected void initChannel(Channel ch) {
                      ch.pipeline().addLast(ssl, new Collector(reply, "hello".length()));
                    }
                  })
              .connect(server.localAddress())
              .sync()
              .channel();
      ssl.handshakeFuture()
          .addListener(
              f -> {
                if (f.isSuccess()) {
                  channel.writeAndFlush(Unpooled.copiedBuffer("hello", StandardCharsets.US_ASCII));
                }
              });
    }

    String reply() throws Exception {
      try {
        return reply.get(10, TimeUnit.SECONDS);
      } finally {
        channel.close().sync();
      }
    }

    Throwable replyFailure() throws Exception {
      try {
        reply.get(10, TimeUnit.SECONDS);
        throw new AssertionError("echo arrived");
      } catch (ExecutionException e) {
        return e.getCause();
      } finally {
        channel.close().sync();
      }
    }

    Throwable handshakeFailure() throws Exception {
      try {
        return ssl.handshakeFuture().await(10, TimeUnit.SECONDS)
            ? ssl.handshakeFuture().cause()
            : null;
      } finally {
        channel.close().sync();
      }
    }
  }

  private Exchange exchange(SslContext context, String host) throws InterruptedException {
    return new Exchange(context, host);
  }

  /** Completes with the text once {@code length} bytes arrived; fails if the channel ends first. */
  private static final class Collector extends SimpleChannelInboundHandler<ByteBuf> {
    private final CompletableFuture<String> reply;
    private final int length;
    private final StringBuilder text = new StringBuilder();

    Collector(CompletableFuture<String> reply, int length) {
      this.reply = reply;
      this.length = length;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, ByteBuf msg) {
      text.append(msg.toString(StandardCharsets.US_ASCII));
      if (text.length() >= length) {
        reply.complete(text.toString());
      }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      reply.completeExceptionally(cause);
      ctx.close();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      reply.completeExceptionally(new IllegalStateException("closed before the echo"));
    }
  }

  private static final class Echo extends ChannelInboundHandlerAdapter {
    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      ctx.writeAndFlush(msg);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      ctx.close();
    }
  }
}
