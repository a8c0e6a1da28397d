package dev.portage.control.destination;

import static dev.portage.control.destination.Kube.put;
import static dev.portage.control.destination.Kube.service;
import static dev.portage.control.destination.Kube.slice;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.portage.api.linkerd.destination.DestinationGrpc;
import dev.portage.api.linkerd.destination.GetDestination;
import dev.portage.api.linkerd.destination.Update;
import dev.portage.api.linkerd.destination.WeightedAddr;
import dev.portage.api.linkerd.net.TcpAddress;
import dev.portage.control.store.ResourceStore;
import dev.portage.core.time.FakeClock;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The Get side of {@link DestinationServer} over real in-process gRPC, fed through the store. */
class DestinationServerTest {

  static final String WEB = "web.default.svc.cluster.local:80";

  final ResourceStore store = new ResourceStore();
  final PrometheusRegistry registry = new PrometheusRegistry();
  final FakeClock clock = new FakeClock();
  DestinationServer destinations;
  Server server;
  ManagedChannel channel;
  DestinationGrpc.DestinationStub stub;

  @BeforeEach
  void start() throws Exception {
    start(DestinationConfig.defaults());
  }

  void start(DestinationConfig config) throws Exception {
    destinations = new DestinationServer(config, store, clock.timeSource(), registry);
    String name = InProcessServerBuilder.generateName();
    server = InProcessServerBuilder.forName(name).addService(destinations.service()).build().start();
    channel = InProcessChannelBuilder.forName(name).build();
    stub = DestinationGrpc.newStub(channel);
  }

  @AfterEach
  void stop() throws Exception {
    channel.shutdownNow();
    server.shutdownNow();
    destinations.close();
    assertThat(channel.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    assertThat(server.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
  }

  Recorder<Update> get(String path) {
    Recorder<Update> r = new Recorder<>();
    stub.get(GetDestination.newBuilder().setScheme("k8s").setPath(path).build(), r);
    return r;
  }

  static List<String> addrs(List<WeightedAddr> list) {
    return list.stream().map(a -> text(a.getAddr())).sorted().collect(Collectors.toList());
  }

  static String text(TcpAddress a) {
    if (a.getIp().hasIpv4()) {
      int v = a.getIp().getIpv4();
      return (v >>> 24) + "." + (v >>> 16 & 255) + "." + (v >>> 8 & 255) + "." + (v & 255) + ":" + a.getPort();
    }
    return String.format("[%016x%016x]:%d", a.getIp().getIpv6().getFirst(), a.getIp().getIpv6().getLast(), a.getPort());
  }

  @Test
  void firstMessageAddsEveryReadyEndpointWithWeightAndLabels() {
    put(store, service("default", "web"));
    put(store, slice("default", "web-1", "web", "10.0.0.1", "10.0.0.2", "10.0.0.3!"));

    Update first = get(WEB).next();

    assertThat(first.hasAdd()).isTrue();
    assertThat(addrs(first.getAdd().getAddrsList())).containsExactly("10.0.0.1:8080", "10.0.0.2:8080");
    WeightedAddr a = first.getAdd().getAddrs(0);
    assertThat(a.getWeight()).isEqualTo(10_000);
    assertThat(a.getMetricLabelsMap()).containsEntry("pod", "pod-10-0-0-1");
    // 10.0.0.1 as one big-endian fixed32
    assertThat(a.getAddr().getIp().getIpv4()).isEqualTo(0x0a000001);
    assertThat(first.getAdd().getMetricLabelsMap())
        .containsEntry("namespace", "default")
        .containsEntry("service", "web");
    assertThat(Metrics.value(registry, "portage_destination_streams", "rpc", "Get")).isEqualTo(1);
  }

  @Test
  void serviceWithoutReadyEndpointsAnswersNoEndpointsExists() {
    put(store, service("default", "web"));
    put(store, slice("default", "web-1", "web", "10.0.0.1!"));

    Update first = get(WEB).next();

    assertThat(first.hasNoEndpoints()).isTrue();
    assertThat(first.getNoEndpoints().getExists()).isTrue();
  }

  @Test
  void unknownServiceAnswersNoEndpointsNotExistsAndPicksUpTheServiceLater() {
    Recorder<Update> r = get(WEB);
    Update first = r.next();
    assertThat(first.hasNoEndpoints()).isTrue();
    assertThat(first.getNoEndpoints().getExists()).isFalse();
    assertThat(r.ended()).isFalse();

    put(store, service("default", "web"));
    Update second = r.next();
    assertThat(second.getNoEndpoints().getExists()).isTrue();

    put(store, slice("default", "web-1", "web", "10.0.0.9"));
    assertThat(addrs(r.next().getAdd().getAddrsList())).containsExactly("10.0.0.9:8080");
  }

  @Test
  void laterChangesAreDiffs() {
    put(store, service("default", "web"));
    put(store, slice("default", "web-1", "web", "10.0.0.1"));
    Recorder<Update> r = get(WEB);
    assertThat(addrs(r.next().getAdd().getAddrsList())).containsExactly("10.0.0.1:8080");

    // a new endpoint: add with only the new one
    put(store, slice("default", "web-1", "web", "10.0.0.1", "10.0.0.2"));
    assertThat(addrs(r.next().getAdd().getAddrsList())).containsExactly("10.0.0.2:8080");

    // a second slice of the same service
    put(store, slice("default", "web-2", "web", "10.0.1.1"));
    assertThat(addrs(r.next().getAdd().getAddrsList())).containsExactly("10.0.1.1:8080");

    // ready flips to false: remove
    put(store, slice("default", "web-1", "web", "10.0.0.1!", "10.0.0.2"));
    Update remove = r.next();
    assertThat(remove.hasRemove()).isTrue();
    assertThat(remove.getRemove().getAddrsList()).extracting(DestinationServerTest::text).containsExactly("10.0.0.1:8080");

    // ready flips back: add again
    put(store, slice("default", "web-1", "web", "10.0.0.1", "10.0.0.2"));
    assertThat(addrs(r.next().getAdd().getAddrsList())).containsExactly("10.0.0.1:8080");

    // the last ones go: no_endpoints{exists:true}
    Kube.delete(store, KubeKinds.ENDPOINT_SLICE, "default", "web-2");
    assertThat(r.next().getRemove().getAddrsList()).extracting(DestinationServerTest::text).containsExactly("10.0.1.1:8080");
    Kube.delete(store, KubeKinds.ENDPOINT_SLICE, "default", "web-1");
    assertThat(r.next().getNoEndpoints().getExists()).isTrue();

    // the service goes: no_endpoints{exists:false}
    Kube.delete(store, KubeKinds.SERVICE, "default", "web");
    assertThat(r.next().getNoEndpoints().getExists()).isFalse();
    assertThat(r.poll()).isNull();
  }

  @Test
  void sliceRelabelledToAnotherServiceLeavesTheOldOne() {
    put(store, service("default", "web"));
    put(store, service("default", "api"));
    put(store, slice("default", "s-1", "web", "10.0.0.1"));
    Recorder<Update> web = get(WEB);
    Recorder<Update> api = get("api.default.svc.cluster.local:80");
    assertThat(web.next().hasAdd()).isTrue();
    assertThat(api.next().getNoEndpoints().getExists()).isTrue();

    put(store, slice("default", "s-1", "api", "10.0.0.1"));

    assertThat(web.next().getNoEndpoints().getExists()).isTrue();
    assertThat(addrs(api.next().getAdd().getAddrsList())).containsExactly("10.0.0.1:8080");
  }

  @Test
  void ipv6EndpointsAreTwoFixed64Halves() {
    put(store, service("default", "web"));
    put(store, slice("default", "web-1", "web", "2001:db8::1"));

    TcpAddress a = get(WEB).next().getAdd().getAddrs(0).getAddr();

    assertThat(a.getIp().getIpv6().getFirst()).isEqualTo(0x20010db800000000L);
    assertThat(a.getIp().getIpv6().getLast()).isEqualTo(1L);
    assertThat(a.getPort()).isEqualTo(8080);
  }

  @Test
  void endpointPortComesFromTheSlicePortNamedLikeTheServicePort() {
    put(
        store,
        """
        apiVersion: v1
        kind: Service
        metadata: {namespace: default, name: web}
        spec:
          ports:
          - {name: http, port: 80, targetPort: web-http}
          - {name: admin, port: 9990, targetPort: 9991}
        """);
    put(
        store,
        """
        apiVersion: discovery.k8s.io/v1
        kind: EndpointSlice
        metadata: {namespace: default, name: web-1, labels: {kubernetes.io/service-name: web}}
        addressType: IPv4
        ports:
        - {name: admin, port: 9991, protocol: TCP}
        - {name: http, port: 8081, protocol: TCP}
        endpoints:
        - addresses: [10.0.0.1]
        """);

    assertThat(addrs(get(WEB).next().getAdd().getAddrsList())).containsExactly("10.0.0.1:8081");
    assertThat(addrs(get("web.default.svc.cluster.local:9990").next().getAdd().getAddrsList()))
        .containsExactly("10.0.0.1:9991");
    // not a service port: the requested port is the endpoint port, as for headless services
    assertThat(addrs(get("web.default.svc.cluster.local:7000").next().getAdd().getAddrsList()))
        .containsExactly("10.0.0.1:7000");
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "",
        "web",
        "web:80",
        "web.default:80",
        "web.default.svc:80",
        "web.default.svc.other.local:80",
        "a.b.c.web.default.svc.cluster.local:80",
        "web.default.svc.cluster.local:0",
        "web.default.svc.cluster.local:http",
        "web.default.svc.cluster.local:70000",
        "web_x.default.svc.cluster.local:80",
        "10.0.0.1:80",
        "10.0.0.1",
        "[::1]:80",
        "::1"
      })
  void malformedAuthoritiesAndIpsAreInvalidArgument(String path) {
    Status s = get(path).awaitEnd();

    assertThat(s.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(s.getDescription()).contains("path");
    assertThat(destinations.streamCount()).isZero();
  }

  @Test
  void otherSchemeIsInvalidArgument() {
    Recorder<Update> r = new Recorder<>();
    stub.get(GetDestination.newBuilder().setScheme("dns").setPath(WEB).build(), r);

    Status s = r.awaitEnd();
    assertThat(s.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(s.getDescription()).isEqualTo("scheme: dns (expected: k8s)");
  }

  @Test
  void malformedContextTokenIsIgnored() {
    put(store, service("default", "web"));
    Recorder<Update> r = new Recorder<>();
    stub.get(GetDestination.newBuilder().setScheme("k8s").setPath(WEB).setContextToken("{not json").build(), r);

    assertThat(r.next().getNoEndpoints().getExists()).isTrue();
  }

  @Test
  void defaultPortIs80AndTrailingDotIsAccepted() {
    put(store, service("default", "web"));
    put(store, slice("default", "web-1", "web", "10.0.0.1"));

    assertThat(get("web.default.svc.cluster.local.").next().hasAdd()).isTrue();
  }

  @Test
  void overflowingQueueAbortsOnlyThatStream() throws Exception {
    stop();
    start(DestinationConfig.defaults().withStreamQueueLimit(5));
    put(store, service("default", "web"));
    put(store, slice("default", "web-1", "web", "10.0.0.1"));

    // A client that reads nothing: in-process gRPC reports the server stream not ready.
    ClientCall<GetDestination, Update> stalled =
        channel.newCall(DestinationGrpc.getGetMethod(), CallOptions.DEFAULT);
    CompletableFuture<Status> stalledEnd = new CompletableFuture<>();
    stalled.start(
        new ClientCall.Listener<>() {
          @Override
          public void onClose(Status status, Metadata trailers) {
            stalledEnd.complete(status);
          }
        },
        new Metadata());
    stalled.sendMessage(GetDestination.newBuilder().setScheme("k8s").setPath(WEB).build());
    stalled.halfClose();
    Recorder<Update> reader = get(WEB);
    reader.next();
    await().atMost(Duration.ofSeconds(10)).until(() -> destinations.streamCount() == 2);

    // Each change adds one endpoint (one update per stream); the reader takes it before the next.
    List<String> ips = new ArrayList<>(List.of("10.0.0.1"));
    int changes = 0;
    while (!stalledEnd.isDone() && changes < 20) {
      changes++;
      ips.add("10.0.1." + changes);
      put(store, slice("default", "web-1", "web", ips.toArray(String[]::new)));
      assertThat(addrs(reader.next().getAdd().getAddrsList())).containsExactly("10.0.1." + changes + ":8080");
    }

    Status s = stalledEnd.get(10, TimeUnit.SECONDS);
    assertThat(s.getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
    assertThat(s.getDescription()).contains("fell more than 5 updates behind");
    // the first message and 4 changes fill the 5 places; the 5th change overflows
    assertThat(changes).isEqualTo(5);
    assertThat(Metrics.value(registry, "endpoint_updates_queue_overflow")).isEqualTo(1);
    assertThat(destinations.streamCount()).isEqualTo(1);

    ips.add("10.0.2.1");
    put(store, slice("default", "web-1", "web", ips.toArray(String[]::new)));
    assertThat(addrs(reader.next().getAdd().getAddrsList())).containsExactly("10.0.2.1:8080");
    assertThat(reader.ended()).isFalse();
  }

  @Test
  void thousandStreamsOpenedAndCancelledLeaveNoSubscription() {
    put(store, service("default", "web"));
    put(store, slice("default", "web-1", "web", "10.0.0.1"));
    List<Recorder<Update>> recorders = new ArrayList<>();
    for (int i = 0; i < 1000; i++) {
      recorders.add(get(WEB));
    }
    for (Recorder<Update> r : recorders) {
      assertThat(r.next().hasAdd()).isTrue();
    }
    assertThat(destinations.streamCount()).isEqualTo(1000);
    assertThat(Metrics.value(registry, "portage_destination_streams", "rpc", "Get")).isEqualTo(1000);

    recorders.forEach(Recorder::cancel);

    await().atMost(Duration.ofSeconds(10)).until(() -> destinations.streamCount() == 0);
    assertThat(Metrics.value(registry, "portage_destination_streams", "rpc", "Get")).isZero();
    // a change after all left reaches nobody and breaks nothing
    put(store, slice("default", "web-1", "web", "10.0.0.2"));
    assertThat(get(WEB).next().hasAdd()).isTrue();
  }

  @Test
  void closeEndsStreamsWithUnavailable() {
    put(store, service("default", "web"));
    Recorder<Update> r = get(WEB);
    r.next();

    destinations.close();

    assertThat(r.awaitEnd().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(destinations.streamCount()).isZero();
    assertThat(get(WEB).awaitEnd().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
  }
}
