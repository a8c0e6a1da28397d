package dev.portage.proxy.mesh;

import static dev.portage.proxy.mesh.MeshFixture.authority;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.portage.core.http.CleartextHttpInitializer;
import dev.portage.core.http.HttpProtocol;
import dev.portage.core.net.NettyTransport;
import dev.portage.core.time.FakeClock;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoopGroup;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http2.Http2StreamChannel;
import io.netty.util.ReferenceCountUtil;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** h2c prior knowledge in (curl) and out (a Netty h2c backend) through the sidecar. */
class H2cIntegrationTest {

  final FakeClock clock = new FakeClock();
  MeshFixture mesh;
  EventLoopGroup group;
  Channel backend;
  final AtomicInteger h2Requests = new AtomicInteger();

  @BeforeEach
  void start() throws Exception {
    mesh = new MeshFixture(clock.timeSource(), SidecarConfig.BalancerKind.P2C_EWMA);
    group = NettyTransport.NIO.newEventLoopGroup(1, "test-h2-backend");
    backend = new ServerBootstrap().group(group).channel(NettyTransport.NIO.serverChannelType())
        .childHandler(new CleartextHttpInitializer(protocol -> new Echo()))
        .bind("127.0.0.1", 0).sync().channel();
  }

  @AfterEach
  void stop() throws Exception {
    mesh.close();
    backend.close().sync();
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
  }

  @Test
  void h2cPriorKnowledgeRequestIsProxiedOverH2c() throws Exception {
    assumeTrue(curlHasHttp2(), "curl with HTTP/2 is not installed");
    mesh.service("web");
    int port = ((InetSocketAddress) backend.localAddress()).getPort();
    mesh.put("""
        apiVersion: discovery.k8s.io/v1
        kind: EndpointSlice
        metadata: {namespace: default, name: web-h2, labels: {kubernetes.io/service-name: web}}
        addressType: IPv4
        ports: [{name: http, port: %d, protocol: TCP}]
        endpoints: [{addresses: ["127.0.0.1"]}]
        """.formatted(port));
    InetSocketAddress proxy = mesh.sidecar.outboundAddress();

    for (int i = 0; i < 2; i++) {
      Process p = new ProcessBuilder("curl", "-sS", "--http2-prior-knowledge", "-m", "10",
          "-w", "\\n%{http_version} %{http_code}", "-H", "Host: " + authority("web"),
          "--data-binary", "ping" + i, "http://127.0.0.1:" + proxy.getPort() + "/echo")
          .redirectErrorStream(true).start();
      assertThat(p.waitFor(20, TimeUnit.SECONDS)).isTrue();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertThat(out).isEqualTo("h2 POST /echo ping" + i + "\n2 200");
    }
    assertThat(h2Requests).hasValue(2);
    // Both requests shared one multiplexed connection to the backend.
    assertThat(mesh.sidecar.pool().openConnections()).isEqualTo(1);
  }

  private static boolean curlHasHttp2() {
    try {
      Process p = new ProcessBuilder("curl", "--version").redirectErrorStream(true).start();
      String v = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      return p.waitFor(10, TimeUnit.SECONDS) && v.contains("HTTP2");
    } catch (Exception e) {
      return false;
    }
  }

  /** Answers "h2|h1 METHOD PATH BODY" once the request body is complete. */
  private final class Echo extends ChannelInboundHandlerAdapter {
    private final StringBuilder body = new StringBuilder();
    private String line;

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
      ctx.read();
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
      if (ctx.channel().isActive()) {
        ctx.read();
      }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      try {
        boolean h2 = ctx.channel() instanceof Http2StreamChannel;
        if (msg instanceof HttpRequest req) {
          line = (h2 ? "h2 " : "h1 ") + req.method() + " " + req.uri() + " ";
          if (h2) {
            h2Requests.incrementAndGet();
          }
        }
        if (msg instanceof HttpContent c) {
          body.append(c.content().toString(StandardCharsets.UTF_8));
        }
        if (msg instanceof LastHttpContent) {
          var res = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK,
              Unpooled.copiedBuffer(line + body, StandardCharsets.UTF_8));
          HttpUtil.setContentLength(res, res.content().readableBytes());
          res.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/plain");
          body.setLength(0);
          ctx.writeAndFlush(res);
        }
        ctx.read();
      } finally {
        ReferenceCountUtil.release(msg);
      }
    }
  }
}
