package dev.portage.control.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.portage.api.linkerd.destination.DestinationGrpc;
import dev.portage.api.linkerd.destination.GetDestination;
import dev.portage.api.linkerd.destination.Update;
import dev.portage.api.linkerd.net.TcpAddress;
import dev.portage.control.ControlPlane;
import dev.portage.control.ControlPlaneConfig;
import dev.portage.core.testing.MockApiServerExtension;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The control plane with the Kubernetes source against fabric8's mock API server (CRUD mode): Services
 * and EndpointSlices created through the Kubernetes API reach Destination {@code Get} streams.
 */
@ExtendWith(MockApiServerExtension.class)
class DestinationKubernetesEndToEndTest {

  KubernetesMockServer server;
  KubernetesClient client;

  @TempDir Path tmp;
  private final Planes planes = new Planes();
  private ControlPlane plane;
  private ManagedChannel channel;

  @BeforeEach
  void startPlane() throws Exception {
    Path kubeconfig = tmp.resolve("kubeconfig");
    Files.writeString(kubeconfig, """
        apiVersion: v1
        kind: Config
        clusters:
        - name: mock
          cluster: {server: "%s", insecure-skip-tls-verify: true}
        users:
        - name: test
          user: {token: test-token}
        contexts:
        - name: mock
          context: {cluster: mock, user: test, namespace: default}
        current-context: mock
        """.formatted(client.getConfiguration().getMasterUrl()));
    plane = planes.start(Planes.local().source(ControlPlaneConfig.SourceType.KUBERNETES).kubeconfig(kubeconfig).build());
    await().atMost(Duration.ofSeconds(10)).until(plane::isReady);
    channel = planes.channel(plane);
  }

  @AfterEach
  void tearDown() throws Exception {
    planes.close();
  }

  private Updates get(String authority) {
    Updates u = new Updates();
    DestinationGrpc.newStub(channel)
        .get(GetDestination.newBuilder().setScheme("k8s").setPath(authority).build(), u);
    return u;
  }

  private void createService(String name) {
    client.services().inNamespace("default").resource(new ServiceBuilder()
        .withNewMetadata().withName(name).withNamespace("default").endMetadata()
        .withNewSpec().addNewPort().withName("http").withPort(8080).withNewTargetPort(9090).endPort().endSpec()
        .build()).create();
  }

  private static EndpointSlice slice(String name, String service, String addressType, String... ips) {
    EndpointSliceBuilder b = new EndpointSliceBuilder()
        .withNewMetadata().withName(name).withNamespace("default")
        .addToLabels("kubernetes.io/service-name", service).endMetadata()
        .withAddressType(addressType)
        .addNewPort().withName("http").withPort(9090).withProtocol("TCP").endPort();
    for (String ip : ips) {
      b.addNewEndpoint().withAddresses(ip).withNewConditions().withReady(true).endConditions().endEndpoint();
    }
    return b.build();
  }

  @Test
  void getFollowsServiceAndEndpointSliceChanges() throws Exception {
    Updates u = get("web.default.svc.cluster.local:8080");
    assertThat(u.next().getNoEndpoints().getExists()).as("unknown service").isFalse();

    createService("web");
    Update created = u.next();
    assertThat(created.hasNoEndpoints()).as("%s", created).isTrue();
    assertThat(created.getNoEndpoints().getExists()).isTrue();

    client.discovery().v1().endpointSlices().inNamespace("default")
        .resource(slice("web-1", "web", "IPv4", "10.0.0.1", "10.0.0.2")).create();
    Update add = u.next();
    assertThat(add.hasAdd()).as("%s", add).isTrue();
    assertThat(add.getAdd().getAddrsList()).extracting(a -> ipv4(a.getAddr()))
        .containsExactlyInAnyOrder("10.0.0.1:9090", "10.0.0.2:9090");
    assertThat(add.getAdd().getAddrs(0).getWeight()).isEqualTo(10_000);

    client.discovery().v1().endpointSlices().inNamespace("default")
        .resource(slice("web-1", "web", "IPv4", "10.0.0.1")).update();
    Update remove = u.next();
    assertThat(remove.hasRemove()).as("%s", remove).isTrue();
    assertThat(remove.getRemove().getAddrsList()).extracting(DestinationKubernetesEndToEndTest::ipv4)
        .containsExactly("10.0.0.2:9090");

    client.discovery().v1().endpointSlices().inNamespace("default").withName("web-1").delete();
    Update none = u.next();
    assertThat(none.hasNoEndpoints()).as("%s", none).isTrue();
    assertThat(none.getNoEndpoints().getExists()).isTrue();

    client.services().inNamespace("default").withName("web").delete();
    assertThat(u.next().getNoEndpoints().getExists()).as("service deleted").isFalse();
    assertThat(u.closed).isNotDone();
  }

  @Test
  void ipv6EndpointsAreSentAsIpv6Addresses() throws Exception {
    createService("six");
    client.discovery().v1().endpointSlices().inNamespace("default")
        .resource(slice("six-1", "six", "IPv6", "fd00::1")).create();
    await().atMost(Duration.ofSeconds(10))
        .until(() -> plane.store().list("discovery.k8s.io/v1/EndpointSlice").items().size() == 1);

    Updates u = get("six.default.svc.cluster.local:8080");
    Update add = u.next();
    assertThat(add.hasAdd()).as("%s", add).isTrue();
    TcpAddress a = add.getAdd().getAddrs(0).getAddr();
    assertThat(a.getIp().hasIpv6()).isTrue();
    assertThat(a.getIp().getIpv6().getFirst()).isEqualTo(0xfd00_0000_0000_0000L);
    assertThat(a.getIp().getIpv6().getLast()).isEqualTo(1L);
    assertThat(a.getPort()).isEqualTo(9090);
  }

  @Test
  void malformedAuthorityIsInvalidArgument() throws Exception {
    Updates u = get("not a host:port");
    assertThat(u.closed.get(10, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
  }

  private static String ipv4(TcpAddress a) {
    int ip = a.getIp().getIpv4();
    return ((ip >>> 24) & 255) + "." + ((ip >>> 16) & 255) + "." + ((ip >>> 8) & 255) + "." + (ip & 255) + ":" + a.getPort();
  }

  /** Records the updates of one Get stream. */
  static final class Updates implements StreamObserver<Update> {
    final BlockingQueue<Update> updates = new LinkedBlockingQueue<>();
    final CompletableFuture<Status> closed = new CompletableFuture<>();

    @Override
    public void onNext(Update value) {
      updates.add(value);
    }

    @Override
    public void onError(Throwable t) {
      closed.complete(Status.fromThrowable(t));
    }

    @Override
    public void onCompleted() {
      closed.complete(Status.OK);
    }

    Update next() throws InterruptedException {
      Update u = updates.poll(10, TimeUnit.SECONDS);
      assertThat(u).as("an update within 10 s (stream %s)", closed.isDone() ? closed.join() : "open").isNotNull();
      return u;
    }
  }
}
