package dev.portage.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import dev.portage.api.konnectivity.CloseRequest;
import dev.portage.api.konnectivity.Data;
import dev.portage.api.konnectivity.DialRequest;
import dev.portage.api.konnectivity.Packet;
import dev.portage.api.konnectivity.PacketType;
import dev.portage.api.konnectivity.ProxyServiceGrpc;
import dev.portage.core.net.NettyTransport;
import dev.portage.core.testing.MockApiServers;
import io.fabric8.kubernetes.api.model.authentication.TokenReview;
import io.fabric8.kubernetes.api.model.authentication.TokenReviewBuilder;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import io.netty.channel.EventLoopGroup;
import io.netty.pkitesting.CertificateBuilder;
import io.netty.pkitesting.X509Bundle;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Upstream's example manifests, unchanged but for paths, hosts and ports: the argument list of
 * Konnectivity's {@code konnectivity-server} static pod (gRPC mode on a Unix socket, agent token auth
 * against a Kubernetes TokenReview, {@code --logtostderr=true} first) and of its {@code konnectivity-agent}
 * DaemonSet (token path, identifiers, sync and probe intervals) start {@code bin/portage server} and
 * {@code bin/portage agent} as they are, and a kube-apiserver-style client reaches a backend through them.
 * The Kubernetes API is fabric8's mock server answering TokenReviews.
 */
class UpstreamManifestIT {
  private static final Path LAUNCHER = Path.of("..", "bin", "portage").toAbsolutePath().normalize();
  private static final String AGENT_USER = "system:serviceaccount:kube-system:konnectivity-agent";

  @TempDir Path dir;
  private final KubernetesMockServer api = new KubernetesMockServer(false);
  private final List<TokenReview> reviews = new CopyOnWriteArrayList<>();
  private final List<Process> processes = new ArrayList<>();
  private ServerSocket backend;
  private EventLoopGroup clientLoop;
  private ManagedChannel channel;

  @BeforeEach
  void setUp() throws Exception {
    api.init();
    api.expect().post().withPath("/apis/authentication.k8s.io/v1/tokenreviews")
        .andReply(201, request -> {
          TokenReview review = Serialization.unmarshal(request.getBody().readUtf8(), TokenReview.class);
          reviews.add(review);
          boolean ok = review.getSpec().getToken().equals("projected-agent-token")
              && review.getSpec().getAudiences().contains("system:konnectivity-server");
          return new TokenReviewBuilder(review).withNewStatus().withAuthenticated(ok)
              .withNewUser().withUsername(ok ? AGENT_USER : "").endUser().endStatus().build();
        })
        .always();
    backend = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread.ofVirtual().start(this::echo);
  }

  @AfterEach
  void tearDown() throws Exception {
    if (channel != null) {
      channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
    }
    if (clientLoop != null) {
      clientLoop.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
    }
    for (Process p : processes) {
      p.destroy();
      if (!p.waitFor(20, TimeUnit.SECONDS)) {
        p.destroyForcibly();
      }
    }
    backend.close();
    MockApiServers.destroy(api);
  }

  /** The backend the client reaches through the tunnel: echoes every connection. */
  private void echo() {
    while (!backend.isClosed()) {
      try {
        Socket s = backend.accept();
        Thread.ofVirtual().start(() -> {
          try (s; InputStream in = s.getInputStream(); OutputStream out = s.getOutputStream()) {
            in.transferTo(out);
          } catch (IOException e) {
            // the tunnel closed it
          }
        });
      } catch (IOException closed) {
        return;
      }
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  private Process start(String name, List<String> args) throws IOException {
    List<String> command = new ArrayList<>(List.of("bash", LAUNCHER.toString()));
    command.addAll(args);
    Process p = new ProcessBuilder(command).redirectErrorStream(true)
        .redirectOutput(dir.resolve(name + ".out").toFile()).start();
    processes.add(p);
    return p;
  }

  private String output(String name) throws IOException {
    return Files.readString(dir.resolve(name + ".out"));
  }

  private static HttpResponse<String> fetch(HttpClient http, int port, String path) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
  }

  private static int status(HttpClient http, int port, String path) throws Exception {
    return fetch(http, port, path).statusCode();
  }

  private static String body(HttpClient http, int port, String path) throws Exception {
    HttpResponse<String> r = fetch(http, port, path);
    assertThat(r.statusCode()).as(path + " on " + port).isEqualTo(200);
    return r.body();
  }

  @Test
  void upstreamServerAndAgentArgumentListsStartPortageAndServeTraffic() throws Exception {
    Instant now = Instant.now();
    X509Bundle ca = new CertificateBuilder().subject("CN=kubernetes").setIsCertificateAuthority(true)
        .notBefore(now.minusSeconds(3600)).notAfter(now.plusSeconds(86400)).buildSelfSigned();
    X509Bundle apiserver = new CertificateBuilder().subject("CN=kube-apiserver").addSanIpAddress("127.0.0.1")
        .addSanDnsName("localhost").addExtendedKeyUsageServerAuth()
        .notBefore(now.minusSeconds(3600)).notAfter(now.plusSeconds(86400)).buildIssuedBy(ca);
    Path pki = Files.createDirectories(dir.resolve("pki"));
    Path caCert = Files.writeString(pki.resolve("ca.crt"), ca.getCertificatePEM());
    Path clusterCert = Files.writeString(pki.resolve("apiserver.crt"), apiserver.getCertificatePathPEM());
    Path clusterKey = Files.writeString(pki.resolve("apiserver.key"), apiserver.getPrivateKeyPEM());
    Path token = Files.writeString(dir.resolve("konnectivity-agent-token"), "projected-agent-token\n");
    Path kubeconfig = Files.writeString(dir.resolve("admin.conf"), """
        apiVersion: v1
        kind: Config
        clusters:
        - name: kubernetes
          cluster:
            server: %s
        contexts:
        - name: admin@kubernetes
          context:
            cluster: kubernetes
            user: admin
        current-context: admin@kubernetes
        users:
        - name: admin
          user:
            token: admin-token
        """.formatted(api.url("/").replaceAll("/$", "")));
    Path socket = dir.resolve("konnectivity-server.socket");
    int agentPort = freePort();
    int serverHealth = freePort();
    int serverAdmin = freePort();
    int agentAdmin = freePort();
    int agentHealth = freePort();

    // kubernetes.io "Set up Konnectivity service": konnectivity-server.yaml, the proxy-server args in order
    // (klog's --logtostderr=true first); only paths and ports differ
    start("server", List.of("server",
        "--logtostderr=true",
        "--uds-name=" + socket,
        "--delete-existing-uds-file",
        "--cluster-cert=" + clusterCert,
        "--cluster-key=" + clusterKey,
        "--mode=grpc",
        "--server-port=0",
        "--agent-port=" + agentPort,
        "--admin-port=" + serverAdmin,
        "--health-port=" + serverHealth,
        "--agent-namespace=kube-system",
        "--agent-service-account=konnectivity-agent",
        "--kubeconfig=" + kubeconfig,
        "--authentication-audience=system:konnectivity-server"));
    // apiserver-network-proxy's examples/kubernetes/konnectivity-agent.yaml (DaemonSet), the proxy-agent
    // args: token path, identifiers ($(HOST_IP) expanded by the kubelet), sync and probe intervals
    start("agent", List.of("agent",
        "--logtostderr=true",
        "--ca-cert=" + caCert,
        "--proxy-server-host=127.0.0.1",
        "--proxy-server-port=" + agentPort,
        "--admin-server-port=" + agentAdmin,
        "--health-server-port=" + agentHealth,
        "--agent-identifiers=ipv4=127.0.0.1",
        "--sync-interval=5s",
        "--sync-interval-cap=30s",
        "--probe-interval=5s",
        "--service-account-token-path=" + token,
        "-v=4"));

    // The agent got in through the TokenReview: the server's health port says ready.
    HttpClient http = HttpClient.newHttpClient();
    await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(200)).until(() -> {
      try {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + serverHealth + "/readyz")).build(),
            HttpResponse.BodyHandlers.ofString()).statusCode() == 200;
      } catch (IOException notYet) {
        return false;
      }
    });
    assertThat(reviews).isNotEmpty();
    assertThat(reviews.get(0).getSpec().getToken()).isEqualTo("projected-agent-token");

    // kube-apiserver's egress selector: gRPC on the Unix socket, one Proxy stream per connection.
    NettyTransport transport = NettyTransport.best();
    clientLoop = transport.newEventLoopGroup(1, "manifest-it");
    channel = NettyChannelBuilder.forAddress(transport.domainSocketAddress(socket))
        .eventLoopGroup(clientLoop).channelType(transport.domainSocketChannelType()).usePlaintext().build();
    BlockingQueue<Object> received = new LinkedBlockingQueue<>();
    StreamObserver<Packet> toServer = ProxyServiceGrpc.newStub(channel).proxy(new StreamObserver<>() {
      @Override
      public void onNext(Packet p) {
        received.add(p);
      }

      @Override
      public void onError(Throwable t) {
        received.add(t);
      }

      @Override
      public void onCompleted() {
        received.add("completed");
      }
    });
    toServer.onNext(Packet.newBuilder().setType(PacketType.DIAL_REQ).setDialRequest(DialRequest.newBuilder()
        .setProtocol("tcp").setAddress("127.0.0.1:" + backend.getLocalPort()).setRandom(42)).build());
    Packet dialed = (Packet) received.poll(30, TimeUnit.SECONDS);
    assertThat(dialed).isNotNull();
    assertThat(dialed.getType()).isEqualTo(PacketType.DIAL_RSP);
    assertThat(dialed.getDialResponse().getError()).isEmpty();
    long connectId = dialed.getDialResponse().getConnectID();
    toServer.onNext(Packet.newBuilder().setType(PacketType.DATA).setData(Data.newBuilder().setConnectID(connectId)
        .setData(ByteString.copyFrom("through the tunnel", StandardCharsets.UTF_8))).build());
    StringBuilder echoed = new StringBuilder();
    while (echoed.length() < "through the tunnel".length()) {
      Packet p = (Packet) received.poll(30, TimeUnit.SECONDS);
      assertThat(p).as("echo so far: " + echoed).isNotNull();
      echoed.append(p.getData().getData().toStringUtf8());
    }
    assertThat(echoed).hasToString("through the tunnel");
    toServer.onNext(Packet.newBuilder().setType(PacketType.CLOSE_REQ)
        .setCloseRequest(CloseRequest.newBuilder().setConnectID(connectId)).build());
    assertThat(((Packet) received.poll(30, TimeUnit.SECONDS)).getType()).isEqualTo(PacketType.CLOSE_RSP);
    toServer.onCompleted();

    // What upstream's probes and scrapes read: health paths on the health ports (the agent's /ready too),
    // metrics with the process_* family on the admin ports, where Go binaries export process_* and go_*.
    assertThat(status(http, agentHealth, "/ready")).isEqualTo(200);
    assertThat(status(http, agentHealth, "/metrics")).isEqualTo(404);
    assertThat(status(http, serverHealth, "/metrics")).isEqualTo(404);
    for (int admin : List.of(serverAdmin, agentAdmin)) {
      assertThat(body(http, admin, "/metrics")).contains("process_cpu_seconds_total ", "process_open_fds ",
          "process_resident_memory_bytes ", "jvm_memory_used_bytes{");
    }
    assertThat(body(http, serverAdmin, "/metrics"))
        .contains("konnectivity_network_proxy_server_dial_duration_seconds_count 1")
        .contains("konnectivity_network_proxy_server_ready_backends{proxy_strategy=\"default\"} 1.0");
    assertThat(body(http, agentAdmin, "/metrics"))
        .contains("konnectivity_network_proxy_agent_open_server_connections 1.0");

    // Both ran the upstream lists without a usage error, logging to stderr as --logtostderr=true asks.
    assertThat(processes).allMatch(Process::isAlive);
    assertThat(output("server")).doesNotContain("Unknown option").contains("tunnel server").contains("started");
    assertThat(output("agent")).doesNotContain("Unknown option").contains("Holding 1 of 1 proxy server connections");
  }
}
