package dev.portage.hub;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.portage.core.time.FakeClock;
import dev.portage.hub.codec.pb.CoordinationV1;
import io.kubernetes.client.proto.Meta;
import io.kubernetes.client.proto.V1;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A kubelet-like protobuf client (client-go's requests, headers and decoding) through the hub in
 * front of a stand-in API server that answers protobuf as kube-apiserver does: the pods, node,
 * ConfigMaps and Services it gets online are the very objects it gets offline, and offline after
 * a hub restart; watch events update the cache; the kubelet's offline writes (Lease renewals, node
 * status, events) are answered locally; objects cached as JSON are answered in protobuf and back.
 * Health checks run on a {@link FakeClock}; nothing sleeps.
 */
class EdgeHubProtobufTest {

  private static final String NODE = "edge-node-1";
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;
  private final FakeClock clock = new FakeClock();
  private KubeApiStandIn api;
  private int apiPort;
  private EdgeHub hub;
  private KubeletLikeClient kubelet;

  @BeforeEach
  void setUp() throws IOException {
    api = KubeApiStandIn.start(0);
    apiPort = api.port();
  }

  @AfterEach
  void tearDown() {
    if (hub != null) {
      hub.close();
    }
    if (api != null) {
      api.close();
    }
  }

  private EdgeHub startHub(int proxyPort) throws IOException {
    EdgeHubConfig config =
        EdgeHubConfig.defaults(List.of("http://127.0.0.1:" + apiPort), dir.resolve("cache"))
        .withPorts(proxyPort, 0, 0)
        .withNodeName(NODE);
    hub = new EdgeHub(config, clock.timeSource(), new PrometheusRegistry()).start();
    kubelet = new KubeletLikeClient("http://127.0.0.1:" + hub.proxyAddress().getPort(),
        KubeletLikeClient.PROTOBUF_ACCEPT);
    return hub;
  }

  /** Advances the hub's clock one health-check interval at a time until {@code healthy}. */
  private void advanceUntilHealth(boolean healthy) {
    await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(20)).until(() -> {
      if (hub.cloudHealthy() == healthy) {
        return true;
      }
      clock.advance(Duration.ofSeconds(10));
      return false;
    });
  }

  private static V1.Pod pod(String name, String node, int i) {
    V1.Pod.Builder p = KubeFixtures.pod().toBuilder();
    p.getMetadataBuilder().setName(name).clearResourceVersion()
        .putAnnotations("portage.dev/index", Integer.toString(i))
        .putAnnotations("portage.dev/padding", "x".repeat(400));
    p.getSpecBuilder().setNodeName(node);
    return p.build();
  }

  private static V1.Node node(String name) {
    return V1.Node.newBuilder()
        .setMetadata(Meta.ObjectMeta.newBuilder().setName(name)
            .putLabels("kubernetes.io/hostname", name)
            .setCreationTimestamp(KubeFixtures.time("2026-11-01T09:00:00Z")))
        .setSpec(V1.NodeSpec.newBuilder().setPodCIDR("10.244.0.0/24"))
        .setStatus(V1.NodeStatus.newBuilder()
            .putCapacity("cpu", KubeFixtures.q("4")).putCapacity("pods", KubeFixtures.q("110"))
            .addConditions(V1.NodeCondition.newBuilder().setType("Ready").setStatus("True")
                .setLastHeartbeatTime(KubeFixtures.time("2026-11-01T10:00:00Z"))
                .setLastTransitionTime(KubeFixtures.time("2026-11-01T09:00:00Z"))
                .setReason("KubeletReady")))
        .build();
  }

  private static V1.ConfigMap configMap(String ns, String name) {
    return V1.ConfigMap.newBuilder()
        .setMetadata(Meta.ObjectMeta.newBuilder().setName(name).setNamespace(ns))
        .putData("app.conf", "mode=edge\n").build();
  }

  private static V1.Service service(String ns, String name, String ip) {
    return V1.Service.newBuilder()
        .setMetadata(Meta.ObjectMeta.newBuilder().setName(name).setNamespace(ns))
        .setSpec(V1.ServiceSpec.newBuilder().setClusterIP(ip).addClusterIPs(ip).setType("ClusterIP")
            .addPorts(V1.ServicePort.newBuilder().setName("http").setProtocol("TCP").setPort(80)
                .setTargetPort(io.kubernetes.client.proto.IntStr.IntOrString.newBuilder()
                    .setType(1).setStrVal("http"))))
        .build();
  }

  /** What the kubelet reads, decoded. */
  private record View(List<V1.Pod> pods, V1.Node node, List<V1.Node> nodes,
      List<V1.ConfigMap> configMaps, V1.ConfigMap configMap, List<V1.Service> services) {}

  private View read() throws Exception {
    return read(kubelet);
  }

  private static View read(KubeletLikeClient kubelet) throws Exception {
    KubeletLikeClient.Answer node = kubelet.get("/api/v1/nodes/" + NODE + "?resourceVersion=0");
    assertThat(node.code()).as(node.text()).isEqualTo(200);
    KubeletLikeClient.Answer cm = kubelet.get("/api/v1/namespaces/default/configmaps/web-config");
    assertThat(cm.code()).as(cm.text()).isEqualTo(200);
    return new View(
        KubeletLikeClient.items(kubelet.list("/api/v1/pods", "spec.nodeName=" + NODE),
            V1.Pod.getDefaultInstance()),
        node.object(V1.Node.getDefaultInstance()),
        KubeletLikeClient.items(kubelet.list("/api/v1/nodes", "metadata.name=" + NODE),
            V1.Node.getDefaultInstance()),
        KubeletLikeClient.items(
            kubelet.list("/api/v1/namespaces/default/configmaps", "metadata.name=web-config"),
            V1.ConfigMap.getDefaultInstance()),
        cm.object(V1.ConfigMap.getDefaultInstance()),
        KubeletLikeClient.items(kubelet.list("/api/v1/services", ""),
            V1.Service.getDefaultInstance()));
  }

  private long cachedFiles(String component, String resource) throws IOException {
    Path d = dir.resolve("cache").resolve(component).resolve(resource);
    if (!Files.exists(d)) {
      return 0;
    }
    try (Stream<Path> files = Files.walk(d)) {
      return files.filter(f -> !f.getFileName().toString().startsWith("."))
          .filter(Files::isRegularFile).count();
    } catch (java.io.UncheckedIOException e) {
      return -1; // a temp file renamed while the walk ran: count again
    }
  }

  @Test
  void kubeletGetsTheSameObjectsOnlineOfflineAndOfflineAfterARestart() throws Exception {
    List<V1.Pod> mine = new ArrayList<>();
    for (int i = 0; i < 300; i++) { // over 128 KiB: the API server gzips the list
      mine.add(api.put(KubeApiStandIn.PODS, pod(String.format("web-%03d", i), NODE, i)));
    }
    api.put(KubeApiStandIn.PODS, pod("elsewhere", "edge-node-2", 0));
    V1.Node node = api.put(KubeApiStandIn.NODES, node(NODE));
    api.put(KubeApiStandIn.NODES, node("edge-node-2"));
    V1.ConfigMap cm = api.put(KubeApiStandIn.CONFIGMAPS, configMap("default", "web-config"));
    api.put(KubeApiStandIn.CONFIGMAPS, configMap("default", "other"));
    List<V1.Service> services = List.of(
        api.put(KubeApiStandIn.SERVICES, service("default", "kubernetes", "10.96.0.1")),
        api.put(KubeApiStandIn.SERVICES, service("default", "web", "10.96.0.20")));
    startHub(0);
    clock.runDue();

    // Online: proxied to the API server, in protobuf; cached as it streams.
    int gzippedBefore = KubeApiStandIn.gzipped();
    View online = read();
    assertThat(KubeApiStandIn.gzipped()).isGreaterThan(gzippedBefore); // the pod list
    assertThat(online.pods()).containsExactlyElementsOf(mine);
    assertThat(online.node()).isEqualTo(node);
    assertThat(online.nodes()).containsExactly(node);
    assertThat(online.configMaps()).containsExactly(cm);
    assertThat(online.configMap()).isEqualTo(cm);
    assertThat(online.services()).containsExactlyElementsOf(services);
    assertThat(api.seen()).anySatisfy(r -> {
      assertThat(r.uri()).startsWith("/api/v1/pods?fieldSelector=spec.nodeName%3Dedge-node-1");
      assertThat(r.headers().get("Accept")).isEqualTo(KubeletLikeClient.PROTOBUF_ACCEPT);
      assertThat(r.headers().get("User-Agent")).isEqualTo(KubeletLikeClient.USER_AGENT);
    });

    // A watch streams protobuf frames through the hub; its events update the cache.
    String listRv = KubeletLikeClient.listResourceVersion(
        kubelet.list("/api/v1/pods", "spec.nodeName=" + NODE));
    try (KubeletLikeClient.Watch watch = kubelet.watch("/api/v1/pods", "spec.nodeName=" + NODE,
        listRv, 60)) {
      assertThat(watch.code()).isEqualTo(200);
      assertThat(watch.contentType()).isEqualTo(KubeApiStandIn.PROTOBUF + ";stream=watch");
      await().atMost(Duration.ofSeconds(10)).until(() -> api.openWatches() == 1);
      V1.Pod changed = mine.get(1).toBuilder()
          .setMetadata(mine.get(1).getMetadata().toBuilder().putLabels("rollout", "2")
              .setResourceVersion("5001"))
          .build();
      api.put(KubeApiStandIn.PODS, changed);
      api.event(KubeApiStandIn.PODS, "MODIFIED", changed);
      Meta.WatchEvent e = watch.next();
      assertThat(e.getType()).isEqualTo("MODIFIED");
      assertThat(V1.Pod.parseFrom(KubeletLikeClient.unknown(e.getObject().getRaw().toByteArray())
          .getRaw())).isEqualTo(changed);
      mine.set(1, changed);
      api.endWatches();
      assertThat(watch.next()).isNull();
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> cachedFiles("kubelet", "pods") == 300
        && cachedFiles("kubelet", "nodes") == 1 && cachedFiles("kubelet", "services") == 2
        && cachedFiles("kubelet", "configmaps") == 1
        && Files.readString(dir.resolve("cache/kubelet/pods/default/web-001"),
            java.nio.charset.StandardCharsets.ISO_8859_1).contains("rollout"));
    // --node-name: the other node read through a kubelet-named client is not kept for this node.
    assertThat(kubelet.get("/api/v1/nodes/edge-node-2").code()).isEqualTo(200);

    // Offline: the API server is gone; the same requests get the same objects from the cache.
    api.close();
    api = null;
    advanceUntilHealth(false);
    View offline = read();
    assertThat(offline.pods()).containsExactlyElementsOf(mine);
    assertThat(offline.node()).isEqualTo(node);
    assertThat(offline.nodes()).containsExactly(node);
    assertThat(offline.configMaps()).containsExactly(cm);
    assertThat(offline.configMap()).isEqualTo(cm);
    assertThat(offline.services()).containsExactlyElementsOf(services);
    assertThat(kubelet.get("/api/v1/nodes/edge-node-2").code()).isEqualTo(404);
    // client-go's other Accept spellings (ContentType set without AcceptContentTypes adds
    // ", */*"; a space after the comma) get the same protobuf answers.
    for (String accept : List.of(KubeApiStandIn.PROTOBUF + ", application/json",
        KubeApiStandIn.PROTOBUF + ", */*")) {
      assertThat(read(new KubeletLikeClient("http://127.0.0.1:" + hub.proxyAddress().getPort(),
          accept))).as(accept).isEqualTo(offline);
    }
    // Label and field selectors, applied to the protobuf objects in the cache.
    assertThat(KubeletLikeClient.items(kubelet.list("/api/v1/pods", "spec.nodeName=" + NODE,
        "app=web,rollout in (2,3)"), V1.Pod.getDefaultInstance())).containsExactly(mine.get(1));
    assertThat(KubeletLikeClient.items(kubelet.list("/api/v1/namespaces/default/pods",
        "metadata.name!=web-000,spec.nodeName=" + NODE, "!rollout"), V1.Pod.getDefaultInstance()))
        .containsExactlyElementsOf(mine.subList(2, mine.size()));
    assertThat(KubeletLikeClient.items(kubelet.list("/api/v1/services", "spec.clusterIP=10.96.0.20",
        ""), V1.Service.getDefaultInstance())).containsExactly(services.get(1));
    assertKubeletWritesAnsweredLocally(node);

    // Offline watch: protobuf stream type, no events, ends at timeoutSeconds.
    CompletableFuture<KubeletLikeClient.Watch> held = CompletableFuture.supplyAsync(() -> {
      try {
        return kubelet.watch("/api/v1/pods", "spec.nodeName=" + NODE, "5001", 30);
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
    await().atMost(Duration.ofSeconds(10)).until(() -> hub.heldWatches() == 1);
    try (KubeletLikeClient.Watch watch = held.get(10, TimeUnit.SECONDS)) {
      assertThat(watch.code()).isEqualTo(200);
      assertThat(watch.contentType()).isEqualTo(KubeApiStandIn.PROTOBUF + ";stream=watch");
      clock.advance(Duration.ofSeconds(30));
      assertThat(watch.next()).isNull();
    }
    assertThat(hub.heldWatches()).isZero();

    // Offline after a hub restart: still the same objects.
    int proxyPort = hub.proxyAddress().getPort();
    hub.close();
    startHub(proxyPort);
    clock.runDue();
    advanceUntilHealth(false);
    View restarted = read();
    assertThat(restarted).isEqualTo(offline);

    // Back online: requests reach the API server again.
    api = KubeApiStandIn.start(apiPort);
    api.put(KubeApiStandIn.NODES, node);
    advanceUntilHealth(true);
    assertThat(kubelet.get("/api/v1/nodes/" + NODE).object(V1.Node.getDefaultInstance()))
        .isEqualTo(node);
    assertThat(api.seen()).anyMatch(r -> r.uri().equals("/api/v1/nodes/" + NODE));
  }

  /** Lease renewals, node status updates and events answered locally; deletes refused. */
  private void assertKubeletWritesAnsweredLocally(V1.Node node) throws Exception {
    CoordinationV1.Lease lease = CoordinationV1.Lease.newBuilder()
        .setMetadata(Meta.ObjectMeta.newBuilder().setName(NODE).setNamespace("kube-node-lease")
            .setResourceVersion("77"))
        .setSpec(CoordinationV1.LeaseSpec.newBuilder().setHolderIdentity(NODE)
            .setLeaseDurationSeconds(40)
            .setRenewTime(Meta.MicroTime.newBuilder().setSeconds(1_800_000_000L).setNanos(123_000)))
        .build();
    KubeletLikeClient.Answer renewed = kubelet.renewLease(NODE,
        KubeApiStandIn.envelope("coordination.k8s.io/v1", "Lease", lease));
    assertThat(renewed.code()).as(renewed.text()).isEqualTo(200);
    assertThat(renewed.object(CoordinationV1.Lease.getDefaultInstance())).isEqualTo(lease);

    KubeletLikeClient.Answer status = kubelet.patchNodeStatus(NODE,
        "{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}");
    assertThat(status.code()).as(status.text()).isEqualTo(200);
    assertThat(status.object(V1.Node.getDefaultInstance())).isEqualTo(node);

    V1.Event event = V1.Event.newBuilder()
        .setMetadata(Meta.ObjectMeta.newBuilder().setName("web-000.1").setNamespace("default"))
        .setInvolvedObject(V1.ObjectReference.newBuilder().setKind("Pod").setName("web-000"))
        .setReason("Started").setMessage("Started container app").setType("Normal").build();
    KubeletLikeClient.Answer created =
        kubelet.createEvent("default", KubeApiStandIn.envelope("v1", "Event", event));
    assertThat(created.code()).as(created.text()).isEqualTo(201);
    assertThat(created.object(V1.Event.getDefaultInstance())).isEqualTo(event);

    assertThat(kubelet.delete("/api/v1/namespaces/default/pods/web-000").code()).isEqualTo(403);
    // Another node's lease is not this hub's to renew.
    assertThat(kubelet.renewLease("edge-node-2",
        KubeApiStandIn.envelope("coordination.k8s.io/v1", "Lease", lease)).code()).isEqualTo(503);
  }

  @Test
  void objectsCachedAsJsonAreAnsweredInProtobufAndObjectsCachedAsProtobufInJson()
      throws Exception {
    String podJson = new String(KubeFixtures.resource("pod.json"),
        java.nio.charset.StandardCharsets.UTF_8);
    V1.Pod pod = api.put(KubeApiStandIn.PODS, KubeFixtures.pod(), podJson);
    V1.Node node = api.put(KubeApiStandIn.NODES, node(NODE));
    startHub(0);
    clock.runDue();
    KubeletLikeClient jsonKubelet = new KubeletLikeClient(
        "http://127.0.0.1:" + hub.proxyAddress().getPort(), "application/json");

    // Online: the pod is read as JSON (cached as JSON), the node as protobuf.
    KubeletLikeClient.Answer jsonPod = jsonKubelet.get("/api/v1/namespaces/default/pods/web-0");
    assertThat(jsonPod.contentType()).startsWith("application/json");
    assertThat(JSON.readTree(jsonPod.body())).isEqualTo(JSON.readTree(podJson));
    assertThat(kubelet.get("/api/v1/nodes/" + NODE).object(V1.Node.getDefaultInstance()))
        .isEqualTo(node);
    await().atMost(Duration.ofSeconds(10))
        .until(() -> cachedFiles("kubelet", "pods") == 1 && cachedFiles("kubelet", "nodes") == 1);
    assertThat(Files.readString(dir.resolve("cache/kubelet/pods/default/web-0"),
        java.nio.charset.StandardCharsets.ISO_8859_1)).startsWith("PCACHE2 json ");
    assertThat(Files.readString(dir.resolve("cache/kubelet/nodes/" + NODE),
        java.nio.charset.StandardCharsets.ISO_8859_1)).startsWith("PCACHE2 protobuf ");

    api.close();
    api = null;
    advanceUntilHealth(false);
    // Offline, each in the other encoding: the same object.
    assertThat(kubelet.get("/api/v1/namespaces/default/pods/web-0")
        .object(V1.Pod.getDefaultInstance())).isEqualTo(pod);
    assertThat(KubeletLikeClient.items(kubelet.list("/api/v1/namespaces/default/pods", ""),
        V1.Pod.getDefaultInstance())).containsExactly(pod);
    KubeletLikeClient.Answer nodeJson = jsonKubelet.get("/api/v1/nodes/" + NODE);
    assertThat(nodeJson.contentType()).isEqualTo("application/json");
    assertThat(JSON.readTree(nodeJson.body()).path("metadata").path("name").asText()).isEqualTo(NODE);
    assertThat(JSON.readTree(nodeJson.body()).path("status").path("capacity").path("cpu").asText())
        .isEqualTo("4");
    assertThat(KubeletLikeClient.items(kubelet.list("/api/v1/namespaces/default/pods",
        "spec.nodeName=edge-node-1", "app=web"), V1.Pod.getDefaultInstance())).containsExactly(pod);

    // An offline watch in JSON: the JSON stream type, open with no events until timeoutSeconds.
    CompletableFuture<KubeletLikeClient.Watch> held = CompletableFuture.supplyAsync(() -> {
      try {
        return jsonKubelet.watch("/api/v1/namespaces/default/pods", "", "1", 20);
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
    await().atMost(Duration.ofSeconds(10)).until(() -> hub.heldWatches() == 1);
    try (KubeletLikeClient.Watch watch = held.get(10, TimeUnit.SECONDS)) {
      assertThat(watch.code()).isEqualTo(200);
      assertThat(watch.contentType()).isEqualTo("application/json");
      assertThat(hub.heldWatches()).isEqualTo(1);
      clock.advance(Duration.ofSeconds(20));
      assertThat(watch.in().read()).isEqualTo(-1); // ended cleanly, no event bytes
    }
    assertThat(hub.heldWatches()).isZero();

    // A client that accepts only protobuf, for a kind without one, is refused like the API server.
    KubeletLikeClient protoOnly = new KubeletLikeClient(
        "http://127.0.0.1:" + hub.proxyAddress().getPort(), KubeApiStandIn.PROTOBUF);
    assertThat(protoOnly.get("/apis/example.com/v1/namespaces/default/widgets/w").code())
        .isEqualTo(406);
  }
}
