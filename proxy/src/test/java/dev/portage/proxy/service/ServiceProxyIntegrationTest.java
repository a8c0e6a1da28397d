package dev.portage.proxy.service;

import static dev.portage.proxy.service.ProxyFixture.entry;
import static dev.portage.proxy.service.ProxyFixture.service;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.portage.core.net.NettyTransport;
import io.netty.channel.Channel;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The service proxy end to end: real sockets on port 0, syncs driven by a fake clock. */
class ServiceProxyIntegrationTest {

  @TempDir java.nio.file.Path dir;

  private TestBackend a;
  private TestBackend b;
  private TestBackend c;
  private ProxyFixture fixture;
  private final List<RefusingPort> refusing = new ArrayList<>();

  @BeforeEach
  void backends() throws IOException {
    a = TestBackend.start("a");
    b = TestBackend.start("b");
    c = TestBackend.start("c");
  }

  @AfterEach
  void tearDown() throws Exception {
    if (fixture != null) {
      fixture.close();
    }
    a.close();
    b.close();
    c.close();
    for (RefusingPort port : refusing) {
      port.close();
    }
  }

  /** A port that refuses connections until the test ends. */
  private RefusingPort refusing() throws IOException {
    RefusingPort port = new RefusingPort();
    refusing.add(port);
    return port;
  }

  @Test
  void roundRobinSpreadsConnectionsEvenlyOverThreeBackends() throws Exception {
    fixture = new ProxyFixture(dir, service("web", a.endpoint(), b.endpoint(), c.endpoint()));
    InetSocketAddress web = fixture.address("web");

    List<String> served = new ArrayList<>();
    for (int i = 0; i < 9; i++) {
      served.add(TestClient.greeting(web));
    }

    assertThat(served).containsExactly("a", "b", "c", "a", "b", "c", "a", "b", "c");
  }

  @Test
  void relaysBytesBothWays() throws Exception {
    fixture = new ProxyFixture(dir, service("web", a.endpoint()));
    try (TestClient client = TestClient.connect(fixture.address("web"))) {
      assertThat(client.readLine()).isEqualTo("a");
      assertThat(client.echo("hello")).isEqualTo("hello");
      assertThat(client.echo("x".repeat(100_000))).hasSize(100_000);
    }
  }

  @Test
  void relayedSocketsAllocateFromTheTransportsAllocator() throws Exception {
    fixture = new ProxyFixture(dir, service("web", a.endpoint()));
    try (TestClient client = TestClient.connect(fixture.address("web"))) {
      assertThat(client.readLine()).isEqualTo("a");
      ProxiedConnection connection = fixture.proxy.connections().iterator().next();
      Channel accepted = connection.channels().get(0);
      List<Channel> relayed = accepted.eventLoop().submit(connection::channels).get();

      // On NIO Netty's default adaptive allocator makes a ByteBuffer view per read and write; the
      // transport's own (pooled there) does not: most of what the relay no longer allocates.
      assertThat(relayed).hasSize(2);
      for (Channel channel : relayed) {
        assertThat(channel.config().getAllocator())
            .as("allocator of %s", channel)
            .isSameAs(NettyTransport.of(channel.eventLoop()).allocator());
      }
    }
  }

  @ParameterizedTest(name = "maxReadSize {0}")
  @ValueSource(ints = {4096, 1 << 20})
  void bulkTransferBothWaysArrivesIntactWhateverTheReadSize(int maxReadSize) throws Exception {
    fixture = new ProxyFixture(dir, service("web", a.endpoint()), o -> o.maxReadSize(maxReadSize));
    int total = 8 << 20;
    byte[] sent = new byte[total];
    new Random(maxReadSize).nextBytes(sent);
    try (Socket client = new Socket()) {
      client.setSoTimeout(10_000);
      client.connect(fixture.address("web"));
      // The backend echoes while we send, so send from another thread to keep both directions moving.
      Thread writer = Thread.ofVirtual().start(() -> {
        try {
          client.getOutputStream().write(sent);
          client.shutdownOutput();
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      });
      byte[] got = client.getInputStream().readAllBytes();
      writer.join(10_000);
      assertThat(got.length).isEqualTo(total + 2); // "a\n" first
      assertThat(Arrays.copyOfRange(got, 2, got.length)).isEqualTo(sent);
    }
    await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
      assertThat(TestMetrics.value(fixture.registry,
          "portage_service_proxy_bytes_total{direction=\"in\",service=\"web\"}")).isEqualTo(total);
      assertThat(TestMetrics.value(fixture.registry,
          "portage_service_proxy_bytes_total{direction=\"out\",service=\"web\"}")).isEqualTo(total + 2);
    });
  }

  @Test
  void randomAndP2cEwmaBalancersProxyEveryConnection() throws Exception {
    fixture = new ProxyFixture(dir, "services:\n"
        + entry("random", new String[] {a.endpoint(), b.endpoint()}, "    balancer: random\n")
        + entry("p2c", new String[] {a.endpoint(), b.endpoint()}, "    balancer: p2c-ewma\n"));
    for (String service : List.of("random", "p2c")) {
      for (int i = 0; i < 20; i++) {
        assertThat(TestClient.greeting(fixture.address(service))).isIn("a", "b");
      }
    }
    assertThat(a.accepted() + b.accepted()).isEqualTo(40);
  }

  @Test
  void sameClientIpSticksToItsEndpointUntilTheAffinityExpires() throws Exception {
    fixture = new ProxyFixture(dir, "services:\n" + entry("web",
        new String[] {a.endpoint(), b.endpoint(), c.endpoint()},
        "    sessionAffinity: ClientIP\n    affinityTimeout: 10s\n"));
    InetSocketAddress web = fixture.address("web");

    String first = greetingFrom("127.0.0.1", web);
    String other = greetingFrom("127.0.0.2", web);
    assertThat(other).isNotEqualTo(first);
    for (int i = 0; i < 5; i++) {
      fixture.clock.advance(Duration.ofSeconds(9)); // each connection restarts the time to live
      assertThat(greetingFrom("127.0.0.1", web)).isEqualTo(first);
      assertThat(greetingFrom("127.0.0.2", web)).isEqualTo(other);
    }
    assertThat(fixture.proxy.affinityEntries("web")).isEqualTo(2);

    fixture.clock.advance(Duration.ofSeconds(10));
    String after = greetingFrom("127.0.0.1", web);
    assertThat(after).isNotEqualTo(first); // expired: the balancer picked the next one

    fixture.clock.advance(Duration.ofSeconds(40)); // a periodic sync (every 30 s) drops expired entries
    assertThat(fixture.proxy.affinityEntries("web")).isZero();
  }

  @Test
  void affinityToARemovedEndpointIsDropped() throws Exception {
    String affinity = "    sessionAffinity: ClientIP\n";
    fixture = new ProxyFixture(dir, "services:\n"
        + entry("web", new String[] {a.endpoint(), b.endpoint()}, affinity));
    InetSocketAddress web = fixture.address("web");
    assertThat(greetingFrom("127.0.0.1", web)).isEqualTo("a");
    assertThat(greetingFrom("127.0.0.1", web)).isEqualTo("a");

    fixture.apply("services:\n" + entry("web", new String[] {b.endpoint()}, affinity));

    assertThat(fixture.proxy.affinityEntries("web")).isZero();
    assertThat(greetingFrom("127.0.0.1", web)).isEqualTo("b");
    fixture.apply("services:\n" + entry("web", new String[] {a.endpoint(), b.endpoint()}, affinity));
    assertThat(greetingFrom("127.0.0.1", web)).isEqualTo("b"); // sticks to its new endpoint
  }

  @Test
  void endpointsRemovedAndAddedMidTrafficLoseNoConnection() throws Exception {
    fixture = new ProxyFixture(dir, service("web", a.endpoint(), b.endpoint()));
    InetSocketAddress web = fixture.address("web");
    TestClient longLived = TestClient.connect(web);
    assertThat(longLived.readLine()).isEqualTo("a");

    AtomicBoolean stop = new AtomicBoolean();
    AtomicInteger ok = new AtomicInteger();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    Map<String, Integer> served = new HashMap<>();
    Thread traffic = Thread.ofPlatform().start(() -> {
      try {
        while (!stop.get()) {
          try (TestClient client = TestClient.connect(web)) {
            String name = client.readLine();
            assertThat(client.echo("ping")).isEqualTo("ping");
            synchronized (served) {
              served.merge(name, 1, Integer::sum);
            }
            ok.incrementAndGet();
          }
        }
      } catch (Throwable t) {
        failure.set(t);
      }
    });
    try {
      String[][] steps = {
        {b.endpoint()}, {b.endpoint(), c.endpoint()}, {c.endpoint()}, {a.endpoint(), c.endpoint()},
        {a.endpoint()}, {a.endpoint(), b.endpoint(), c.endpoint()}, {b.endpoint()},
      };
      for (String[] step : steps) {
        int before = ok.get();
        fixture.apply(service("web", step));
        // let real traffic flow on each endpoint set before changing it again
        await().atMost(Duration.ofSeconds(10)).until(() -> ok.get() >= before + 20 || failure.get() != null);
      }
    } finally {
      stop.set(true);
      traffic.join(10_000);
    }

    assertThat(failure.get()).isNull();
    assertThat(served.keySet()).containsExactlyInAnyOrder("a", "b", "c");
    // the connection to a, removed and re-added meanwhile, was never cut
    assertThat(longLived.echo("still here")).isEqualTo("still here");
    longLived.close();
  }

  @Test
  void closeRemovedEndpointConnectionsClosesThemAtTheNextSync() throws Exception {
    fixture = new ProxyFixture(dir, service("web", a.endpoint(), b.endpoint()),
        o -> o.closeRemovedEndpointConnections(true));
    InetSocketAddress web = fixture.address("web");
    // connected one after the other, so each greeting says which is which
    TestClient first = TestClient.connect(web);
    String firstName = first.readLine();
    TestClient second = TestClient.connect(web);
    assertThat(List.of(firstName, second.readLine())).containsExactlyInAnyOrder("a", "b");
    TestClient toA = firstName.equals("a") ? first : second;
    TestClient toB = firstName.equals("a") ? second : first;

    fixture.apply(service("web", b.endpoint()));

    assertThat(toA.closedByPeer()).isTrue();
    assertThat(toB.echo("kept")).isEqualTo("kept");
    toA.close();
    toB.close();
  }

  @Test
  void failedDialFallsThroughToTheNextEndpoint() throws Exception {
    String refused = refusing().endpoint();
    fixture = new ProxyFixture(dir, service("web", refused, a.endpoint()));
    InetSocketAddress web = fixture.address("web");

    for (int i = 0; i < 4; i++) {
      assertThat(TestClient.greeting(web)).isEqualTo("a");
    }

    // round robin alternates, so each connection tries the refusing endpoint once, then a
    assertThat(fixture.metric(
        "portage_service_proxy_dial_failures_total{endpoint=\"" + refused + "\",service=\"web\"}"))
        .isEqualTo(4);
    assertThat(fixture.metric(
        "portage_service_proxy_connections_total{endpoint=\"" + a.endpoint() + "\",service=\"web\"}"))
        .isEqualTo(4);
  }

  @Test
  void clientIsClosedWhenEveryDialFails() throws Exception {
    String refused1 = refusing().endpoint();
    String refused2 = refusing().endpoint();
    fixture = new ProxyFixture(dir, service("web", refused1, refused2));

    try (TestClient client = TestClient.connect(fixture.address("web"))) {
      assertThat(client.closedByPeer()).isTrue();
    }

    await().atMost(Duration.ofSeconds(10)).until(() -> fixture.proxy.liveConnections() == 0);
    // four attempts (250 ms, 500 ms, 1 s, 2 s timeouts), alternating between the two endpoints
    assertThat(fixture.metric(
        "portage_service_proxy_dial_failures_total{endpoint=\"" + refused1 + "\",service=\"web\"}"))
        .isEqualTo(2);
    assertThat(fixture.metric(
        "portage_service_proxy_dial_failures_total{endpoint=\"" + refused2 + "\",service=\"web\"}"))
        .isEqualTo(2);
    assertThat(fixture.metric(
        "portage_service_proxy_rejected_connections_total{reason=\"dials_failed\",service=\"web\"}"))
        .isEqualTo(1);
  }

  @Test
  void clientIsClosedWhenTheServiceHasNoEndpoint() throws Exception {
    fixture = new ProxyFixture(dir, service("web"));
    try (TestClient client = TestClient.connect(fixture.address("web"))) {
      assertThat(client.closedByPeer()).isTrue();
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> fixture.metric(
        "portage_service_proxy_rejected_connections_total{reason=\"no_endpoints\",service=\"web\"}") == 1);
  }

  @Test
  void thousandEndpointChangesInOneSecondCauseAtMostThreeSyncs() throws Exception {
    fixture = new ProxyFixture(dir, service("web", a.endpoint()));
    long before = fixture.proxy.syncs();

    for (int i = 0; i < 1000; i++) {
      fixture.write(i % 2 == 0 ? service("web", a.endpoint(), b.endpoint()) : service("web", b.endpoint()));
      fixture.reload();
      fixture.clock.advance(Duration.ofMillis(1));
    }

    assertThat(fixture.proxy.syncs() - before).isBetween(1L, 3L);
    fixture.clock.advance(Duration.ofSeconds(1)); // the last change is applied at the next allowed sync
    assertThat(TestClient.greeting(fixture.address("web"))).isEqualTo("b");
    assertThat(TestClient.greeting(fixture.address("web"))).isEqualTo("b");
  }

  @Test
  void listenersOpenAndCloseAsServicesComeAndGo() throws Exception {
    fixture = new ProxyFixture(dir, service("web", a.endpoint()));
    assertThat(fixture.proxy.services()).containsExactly("web");

    fixture.apply("services:\n" + entry("web", new String[] {a.endpoint()}, "")
        + entry("api", new String[] {b.endpoint()}, ""));
    assertThat(fixture.proxy.services()).containsExactly("api", "web");
    InetSocketAddress api = fixture.address("api");
    assertThat(TestClient.greeting(api)).isEqualTo("b");

    fixture.apply(service("web", a.endpoint()));
    assertThat(fixture.proxy.services()).containsExactly("web");
    assertThat(fixture.proxy.localAddress("api")).isNull();
    assertNothingListensOn(api);
    assertThat(fixture.metric("portage_service_proxy_services")).isEqualTo(1);
  }

  @Test
  void malformedFileIsReportedWithItsLineAndTheLastGoodStateStays() throws Exception {
    fixture = new ProxyFixture(dir, service("web", a.endpoint()));

    fixture.write("services:\n  - name: web\n    listen: 127.0.0.1:0\n    endpoints: [\"nonsense\"]\n");
    assertThatThrownBy(fixture::reload)
        .isInstanceOf(MalformedEndpointsFileException.class)
        .hasMessageContaining("endpoints.yaml:4: services[0]: web: endpoints: nonsense (expected: host:port)");
    fixture.sync();
    assertThat(TestClient.greeting(fixture.address("web"))).isEqualTo("a");

    fixture.apply(service("web", b.endpoint())); // a good file is taken again
    assertThat(TestClient.greeting(fixture.address("web"))).isEqualTo("b");
  }

  @Test
  void aThousandProxiedConnectionsLeaveNoStateBehind() throws Exception {
    fixture = new ProxyFixture(dir, service("web", a.endpoint(), b.endpoint()));
    InetSocketAddress web = fixture.address("web");

    for (int i = 0; i < 1000; i++) {
      try (TestClient client = TestClient.connect(web)) {
        assertThat(client.readLine()).isIn("a", "b");
      }
    }

    await().atMost(Duration.ofSeconds(10)).until(() -> fixture.proxy.liveConnections() == 0);
    assertThat(fixture.metric(
        "portage_service_proxy_active_connections{endpoint=\"" + a.endpoint() + "\",service=\"web\"}"))
        .isZero();
    assertThat(fixture.metric(
        "portage_service_proxy_connections_total{endpoint=\"" + a.endpoint() + "\",service=\"web\"}"))
        .isEqualTo(500);
  }

  private static String greetingFrom(String ip, InetSocketAddress proxy) throws IOException {
    try (TestClient client = TestClient.connectFrom(ip, proxy)) {
      return client.readLine();
    }
  }

  /**
   * Waits (bounded) until connections to a closed listener's port are refused. The JDK releases a
   * selector-registered listening socket only when its event loop next processes the cancelled key,
   * so for a moment after the close future completes the kernel may still accept a connection.
   */
  private static void assertNothingListensOn(InetSocketAddress address) {
    await().atMost(Duration.ofSeconds(10)).until(() -> refused(address));
  }

  private static boolean refused(InetSocketAddress address) throws IOException {
    try (TestClient ignored = TestClient.connect(address)) {
      return false;
    } catch (ConnectException expected) {
      return true;
    }
  }
}
