package dev.portage.proxy.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.portage.api.linkerd.destination.AddrSet;
import dev.portage.api.linkerd.destination.DestinationGrpc;
import dev.portage.api.linkerd.destination.GetDestination;
import dev.portage.api.linkerd.destination.Update;
import dev.portage.api.linkerd.destination.WeightedAddr;
import dev.portage.api.linkerd.destination.WeightedAddrSet;
import dev.portage.api.linkerd.net.IPAddress;
import dev.portage.api.linkerd.net.TcpAddress;
import dev.portage.control.client.destination.DestinationClient;
import dev.portage.core.time.FakeClock;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Endpoints of authorities resolved through the Destination API: a real in-process gRPC server of
 * the Linkerd Destination service whose updates the test scripts.
 */
class DestinationEndpointSourceIntegrationTest {

  private static final String WEB = "web.default.svc.cluster.local:8080";

  @TempDir Path dir;

  private final FakeClock clock = new FakeClock();
  private final Map<String, ServerCallStreamObserver<Update>> streams = new ConcurrentHashMap<>();
  private final Map<String, Boolean> cancelled = new ConcurrentHashMap<>();
  private Server server;
  private ManagedChannel channel;
  private TestBackend a;
  private TestBackend b;
  private TestBackend c;
  private ServiceProxy proxy;

  @BeforeEach
  void setUp() throws Exception {
    String name = InProcessServerBuilder.generateName();
    server = InProcessServerBuilder.forName(name)
        .addService(new DestinationGrpc.DestinationImplBase() {
          @Override
          public void get(GetDestination request, StreamObserver<Update> observer) {
            ServerCallStreamObserver<Update> call = (ServerCallStreamObserver<Update>) observer;
            call.setOnCancelHandler(() -> cancelled.put(request.getPath(), true));
            streams.put(request.getPath(), call);
          }
        })
        .build()
        .start();
    channel = InProcessChannelBuilder.forName(name).build();
    a = TestBackend.start("a");
    b = TestBackend.start("b");
    c = TestBackend.start("c");
  }

  @AfterEach
  void tearDown() throws Exception {
    if (proxy != null) {
      proxy.close();
    }
    channel.shutdownNow();
    server.shutdownNow();
    assertThat(server.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    a.close();
    b.close();
    c.close();
  }

  private static TcpAddress address(TestBackend backend) {
    return TcpAddress.newBuilder()
        .setIp(IPAddress.newBuilder().setIpv4(0x7f000001))
        .setPort(backend.address().getPort())
        .build();
  }

  private static Update add(TestBackend... backends) {
    WeightedAddrSet.Builder set = WeightedAddrSet.newBuilder();
    for (TestBackend backend : backends) {
      set.addAddrs(WeightedAddr.newBuilder().setAddr(address(backend)).setWeight(10_000));
    }
    return Update.newBuilder().setAdd(set).build();
  }

  private void awaitSynced(Callable<Boolean> condition) {
    await().atMost(Duration.ofSeconds(10)).until(() -> {
      clock.advance(Duration.ofSeconds(1));
      return condition.call();
    });
  }

  @Test
  void authoritiesInTheFileAreResolvedAndFollowed() throws Exception {
    Path file = dir.resolve("endpoints.yaml");
    String local = ProxyFixture.entry("local", new String[] {c.endpoint()}, "");
    Files.writeString(file, "services:\n"
        + "  - name: web\n    listen: 127.0.0.1:0\n    authority: " + WEB + "\n" + local);
    DestinationClient client = DestinationClient.newBuilder(channel, clock.timeSource()).build();
    DestinationEndpointSource source =
        new DestinationEndpointSource(new FileEndpointSource(file, false, () -> {}), client, null, "in-process");
    ServiceProxyConfig config = ServiceProxyConfig.builder()
        .endpointsFile(file).destinationAddr("127.0.0.1:8086").adminPort(-1).ioThreads(1).build();
    proxy = new ServiceProxy(config, source, clock.timeSource(), new PrometheusRegistry()).start();
    clock.runDue();

    assertThat(proxy.services()).containsExactly("local", "web"); // web listens before it resolves
    assertThat(proxy.endpoints("web")).isEmpty();
    await().atMost(Duration.ofSeconds(10)).until(() -> streams.containsKey(WEB));

    streams.get(WEB).onNext(add(a, b));
    awaitSynced(() -> proxy.endpoints("web").size() == 2);
    assertThat(List.of(TestClient.greeting(proxy.localAddress("web")), TestClient.greeting(proxy.localAddress("web"))))
        .containsExactlyInAnyOrder("a", "b");
    assertThat(TestClient.greeting(proxy.localAddress("local"))).isEqualTo("c");

    streams.get(WEB).onNext(Update.newBuilder().setRemove(AddrSet.newBuilder().addAddrs(address(a))).build());
    awaitSynced(() -> proxy.endpoints("web").equals(List.of(b.endpoint())));
    assertThat(TestClient.greeting(proxy.localAddress("web"))).isEqualTo("b");

    Files.writeString(file, "services:\n" + local); // web leaves the file: its watch is cancelled
    source.reloadFile();
    clock.advance(Duration.ofSeconds(1));
    assertThat(proxy.services()).containsExactly("local");
    await().atMost(Duration.ofSeconds(10)).until(() -> cancelled.containsKey(WEB));
  }
}
