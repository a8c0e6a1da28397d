package dev.portage.tunnel.e2e;

import static dev.portage.tunnel.e2e.MetricValues.SERVER;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import dev.portage.api.konnectivity.AgentServiceGrpc;
import dev.portage.api.konnectivity.Packet;
import dev.portage.tunnel.server.FrontendMode;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Malformed, unexpected and oversized input against a real server with a real agent: each gets a
 * clear answer (or a clean end of its own stream) and the server keeps serving everyone else.
 */
class BadInputEndToEndTest {
  private final List<AutoCloseable> resources = new ArrayList<>();
  private TunnelFixture fx;
  private TcpBackend echo;

  @AfterEach
  void tearDown() throws Exception {
    for (int i = resources.size() - 1; i >= 0; i--) {
      resources.get(i).close();
    }
    if (fx != null) {
      fx.close();
    }
  }

  private <T extends AutoCloseable> T use(T t) {
    resources.add(t);
    return t;
  }

  private void start(FrontendMode mode) throws Exception {
    fx = TunnelFixture.start(mode);
    fx.agent("agent-a");
    echo = use(TcpBackend.echo());
  }

  /** A full CONNECT tunnel round trip still works. */
  private void assertConnectStillWorks() throws Exception {
    try (ConnectClient c = ConnectClient.tunnel(fx.proxyPort(), echo.address())) {
      c.write("still here".getBytes(StandardCharsets.US_ASCII));
      assertThat(new String(c.read(10), StandardCharsets.US_ASCII)).isEqualTo("still here");
    }
  }

  private void assertGrpcStillWorks() {
    GrpcTunnel t = fx.grpcTunnel();
    t.connect(echo.address());
    t.write("still here".getBytes(StandardCharsets.US_ASCII));
    assertThat(new String(t.read(10), StandardCharsets.US_ASCII)).isEqualTo("still here");
    t.closeRequest();
    assertThat(t.awaitClose().getCode()).isEqualTo(Status.Code.OK);
  }

  private String answerTo(String head) throws Exception {
    try (ConnectClient c = ConnectClient.to(fx.proxyPort())) {
      c.write(head.getBytes(StandardCharsets.ISO_8859_1));
      return c.readToEofText();
    }
  }

  @Test
  void methodsOtherThanConnectGet405() throws Exception {
    start(FrontendMode.HTTP_CONNECT);
    for (String method : List.of("GET", "POST", "PUT", "DELETE", "OPTIONS")) {
      assertThat(answerTo(method + " http://" + echo.address() + "/ HTTP/1.1\r\nHost: " + echo.address() + "\r\n\r\n"))
          .as(method)
          .isEqualTo("HTTP/1.1 405 Method Not Allowed\r\nContent-Type: text/plain\r\nContent-Length: 44\r\n"
              + "Connection: close\r\n\r\nthis proxy only supports CONNECT passthrough");
    }
    assertConnectStillWorks();
    fx.awaitNoTunnelState();
  }

  @Test
  void malformedConnectTargetsAreAnsweredWithTheAgentsError() throws Exception {
    start(FrontendMode.HTTP_CONNECT);
    assertThat(answerTo("CONNECT nonsense HTTP/1.1\r\n\r\n"))
        .startsWith("HTTP/1.1 502 Bad Gateway\r\n").endsWith("missing port in address");
    assertThat(answerTo("CONNECT a:b:443 HTTP/1.1\r\n\r\n"))
        .startsWith("HTTP/1.1 502 Bad Gateway\r\n").endsWith("too many colons in address");
    assertThat(answerTo("CONNECT 127.0.0.1:99999 HTTP/1.1\r\n\r\n"))
        .startsWith("HTTP/1.1 502 Bad Gateway\r\n").endsWith("invalid port");
    assertConnectStillWorks();
    fx.awaitNoTunnelState();
  }

  @Test
  void garbageInsteadOfARequestHeadGets400() throws Exception {
    start(FrontendMode.HTTP_CONNECT);
    // A TLS ClientHello sent to the plaintext port.
    String answer = answerTo("\u0016\u0003\u0001\u0002\u0000\u0001\u0000\u0001\u00fc\u0003\u0003 \r\n\r\n");
    assertThat(answer).startsWith("HTTP/1.1 400 Bad Request\r\n");
    assertConnectStillWorks();
    fx.awaitNoTunnelState();
  }

  @Test
  void agentStreamsWithoutOrWithTwoAgentIdsAreRefused() throws Exception {
    start(FrontendMode.GRPC);
    ManagedChannel ch = fx.channel(fx.server.agentPort());

    Metadata none = new Metadata();
    assertThat(connectStatus(ch, none).getDescription()).isEqualTo("expected exactly one agentid header, got 0");
    Metadata two = new Metadata();
    two.put(dev.portage.tunnel.wire.Metadata.AGENT_ID, "x");
    two.put(dev.portage.tunnel.wire.Metadata.AGENT_ID, "y");
    Status twice = connectStatus(ch, two);
    assertThat(twice.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(twice.getDescription()).isEqualTo("expected exactly one agentid header, got 2");

    assertThat(fx.serverMetric(SERVER + "grpc_connections", "service_method", "Connect")).isEqualTo(1);
    assertGrpcStillWorks();
  }

  private static Status connectStatus(ManagedChannel ch, Metadata headers) throws Exception {
    CompletableFuture<Status> done = new CompletableFuture<>();
    ClientCall<Packet, Packet> call = ch.newCall(AgentServiceGrpc.getConnectMethod(), CallOptions.DEFAULT);
    call.start(new ClientCall.Listener<>() {
      @Override
      public void onClose(Status status, Metadata trailers) {
        done.complete(status);
      }
    }, headers);
    call.request(1);
    Status s = done.get(30, TimeUnit.SECONDS);
    assertThat(s.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    return s;
  }

  @Test
  void oversizedDataEndsOnlyItsOwnStream() throws Exception {
    start(FrontendMode.GRPC);
    GrpcTunnel healthy = fx.grpcTunnel();
    healthy.connect(echo.address());
    TcpBackend victimBackend = use(TcpBackend.manual());
    GrpcTunnel oversized = fx.grpcTunnel();
    oversized.connect(victimBackend.address());
    Socket backendSide = use(victimBackend.nextSocket());

    // gRPC's default limit for an inbound message is 4 MiB.
    oversized.send(GrpcTunnel.data(oversized.connectID(), ByteString.copyFrom(new byte[4 * 1024 * 1024 + 1])));

    Status status = oversized.awaitClose();
    assertThat(status.getCode()).isIn(Status.Code.RESOURCE_EXHAUSTED, Status.Code.CANCELLED);
    backendSide.setSoTimeout(30_000);
    try (InputStream in = backendSide.getInputStream()) {
      assertThat(in.readAllBytes()).as("nothing of the oversized packet reached the backend").isEmpty();
    }
    healthy.write(new byte[] {1, 2, 3});
    assertThat(healthy.read(3)).containsExactly(1, 2, 3);
    assertGrpcStillWorks();
    healthy.closeRequest();
    healthy.awaitClose();
    fx.awaitNoTunnelState();
  }

  @Test
  void garbageBytesOnTheAgentPortAreDroppedAndAgentsKeepWorking() throws Exception {
    start(FrontendMode.GRPC);
    try (Socket s = new Socket("127.0.0.1", fx.server.agentPort())) {
      s.setSoTimeout(30_000);
      s.getOutputStream().write(TcpBackend.payload(99, 64 * 1024));
      s.getOutputStream().flush();
      // The server answers with an HTTP/2 GOAWAY at most, then closes the connection.
      InputStream in = s.getInputStream();
      try {
        in.readAllBytes();
      } catch (java.net.SocketException reset) {
        // closed with unread input: a reset is the same end
      }
    }
    assertThat(fx.serverMetric(SERVER + "grpc_connections", "service_method", "Connect")).isEqualTo(1);
    assertGrpcStillWorks();
    // A new agent can still connect.
    fx.agent("agent-b");
    await().atMost(TunnelFixture.WAIT).until(() ->
        fx.serverMetric(SERVER + "grpc_connections", "service_method", "Connect") == 2);
  }
}
