package dev.portage.control.client.destination;

import static dev.portage.control.client.destination.QueueListener.addresses;
import static dev.portage.control.destination.Kube.put;
import static dev.portage.control.destination.Kube.service;
import static dev.portage.control.destination.Kube.slice;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.portage.api.linkerd.destination.DestinationProfile;
import dev.portage.control.destination.DestinationConfig;
import dev.portage.control.destination.DestinationServer;
import dev.portage.control.destination.Kube;
import dev.portage.control.store.ResourceStore;
import dev.portage.core.time.FakeClock;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@link DestinationClient} against the real {@link DestinationServer} over in-process gRPC. */
class DestinationClientTest {

  static final String WEB = "web.default.svc.cluster.local:80";

  final ResourceStore store = new ResourceStore();
  final FakeClock serverClock = new FakeClock();
  final FakeClock clock = new FakeClock();
  final String name = InProcessServerBuilder.generateName();
  DestinationServer destinations;
  Server server;
  ManagedChannel channel;
  DestinationClient client;

  @BeforeEach
  void start() throws Exception {
    destinations =
        new DestinationServer(DestinationConfig.defaults(), store, serverClock.timeSource(), new PrometheusRegistry());
    server = InProcessServerBuilder.forName(name).addService(destinations.service()).build().start();
    channel = InProcessChannelBuilder.forName(name).build();
    client = DestinationClient.newBuilder(channel, clock.timeSource()).random(new SplittableRandom(7)).build();
  }

  @AfterEach
  void stop() throws Exception {
    client.close();
    channel.shutdownNow();
    server.shutdownNow();
    destinations.close();
    assertThat(channel.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    assertThat(server.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void deliversWholeSetsWithWeightsAndMergedLabels() {
    put(store, service("default", "web"));
    put(store, slice("default", "web-1", "web", "10.0.0.1", "2001:db8::7"));
    QueueListener l = new QueueListener();

    client.watchEndpoints(WEB, l);

    EndpointSet first = l.nextSet();
    assertThat(first.exists()).isTrue();
    assertThat(addresses(first)).containsExactly("10.0.0.1:8080", "2001:db8:0:0:0:0:0:7:8080");
    ResolvedEndpoint e = first.endpoints().get(new InetSocketAddress("10.0.0.1", 8080));
    assertThat(e.weight()).isEqualTo(10_000);
    assertThat(e.labels())
        .containsEntry("namespace", "default")
        .containsEntry("service", "web")
        .containsEntry("pod", "pod-10-0-0-1");

    put(store, slice("default", "web-1", "web", "10.0.0.1", "10.0.0.2"));
    // add then remove: two whole sets
    assertThat(addresses(l.nextSet())).containsExactly("10.0.0.1:8080", "10.0.0.2:8080", "2001:db8:0:0:0:0:0:7:8080");
    assertThat(addresses(l.nextSet())).containsExactly("10.0.0.1:8080", "10.0.0.2:8080");

    Kube.delete(store, "discovery.k8s.io/v1/EndpointSlice", "default", "web-1");
    EndpointSet none = l.nextSet();
    assertThat(none.isEmpty()).isTrue();
    assertThat(none.exists()).isTrue();
  }

  @Test
  void unknownServiceIsAnEmptySetThatDoesNotExist() {
    QueueListener l = new QueueListener();

    client.watchEndpoints(WEB, l);

    EndpointSet s = l.nextSet();
    assertThat(s.exists()).isFalse();
    assertThat(s.isEmpty()).isTrue();
  }

  @Test
  void keepsTheLastSetAcrossAServerRestartUntilTheFirstMessageReplacesIt() throws Exception {
    put(store, service("default", "web"));
    put(store, slice("default", "web-1", "web", "10.0.0.1", "10.0.0.2"));
    QueueListener l = new QueueListener();
    client.watchEndpoints(WEB, l);
    assertThat(addresses(l.nextSet())).containsExactly("10.0.0.1:8080", "10.0.0.2:8080");

    server.shutdownNow();
    assertThat(server.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    // the stream's end reaches the client on a gRPC thread; it then schedules a reconnect on the clock
    await().atMost(Duration.ofSeconds(10)).until(() -> clock.pendingTasks() == 1);
    assertThat(clock.nextDeadline()).isBetween(Duration.ofMillis(100), Duration.ofMillis(110));

    put(store, slice("default", "web-1", "web", "10.0.0.3"));
    server = InProcessServerBuilder.forName(name).addService(destinations.service()).build().start();
    assertThat(l.sets).as("nothing delivered while disconnected: the cached set stays").isEmpty();

    clock.advance(Duration.ofMillis(110));

    // the first message replaces the whole set: 10.0.0.1 and .2 are gone without any remove
    assertThat(addresses(l.nextSet())).containsExactly("10.0.0.3:8080");
    assertThat(destinations.streamCount()).isEqualTo(1);
  }

  @Test
  void invalidAuthorityEndsTheWatchWithoutReconnecting() {
    QueueListener l = new QueueListener();

    client.watchEndpoints("10.0.0.1:80", l);

    assertThat(l.awaitError().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    await().atMost(Duration.ofSeconds(10)).until(() -> client.activeWatches() == 0);
    assertThat(clock.pendingTasks()).isZero();
    clock.advance(Duration.ofMinutes(2));
    assertThat(destinations.streamCount()).isZero();
    assertThat(l.sets).isEmpty();
  }

  @Test
  void profilesAreDeliveredWholeOnEveryChange() {
    QueueListener l = new QueueListener();
    client.watchProfile(WEB, l);
    DestinationProfile first = l.nextProfile();
    assertThat(first.getFullyQualifiedName()).isEqualTo("web.default.svc.cluster.local");
    assertThat(first.getRoutesList()).isEmpty();

    put(
        store,
        """
        apiVersion: linkerd.io/v1alpha2
        kind: ServiceProfile
        metadata: {namespace: default, name: web.default.svc.cluster.local}
        spec:
          routes:
          - name: all-gets
            condition: {method: GET}
            isRetryable: true
        """);

    DestinationProfile second = l.nextProfile();
    assertThat(second.getRoutesList()).hasSize(1);
    assertThat(second.getRoutes(0).getIsRetryable()).isTrue();
  }

  @Test
  void closingTheClientEndsItsServerStreams() {
    put(store, service("default", "web"));
    QueueListener l = new QueueListener();
    DestinationWatch w = client.watchEndpoints(WEB, l);
    client.watchProfile(WEB, l);
    l.nextSet();
    l.nextProfile();
    assertThat(w.authority()).isEqualTo(WEB);
    assertThat(destinations.streamCount()).isEqualTo(2);

    client.close();

    await().atMost(Duration.ofSeconds(10)).until(() -> destinations.streamCount() == 0);
    await().atMost(Duration.ofSeconds(10)).until(() -> client.activeWatches() == 0);
    assertThat(clock.pendingTasks()).isZero();
  }
}
