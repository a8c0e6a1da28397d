package dev.portage.hub.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.Message;
import dev.portage.hub.KubeFixtures;
import dev.portage.hub.codec.pb.CoordinationV1;
import dev.portage.hub.codec.pb.DiscoveryV1;
import dev.portage.hub.codec.pb.EventsV1;
import io.kubernetes.client.proto.Meta;
import io.kubernetes.client.proto.V1;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The JSON ↔ protobuf mapping against independent oracles: a pod as kube-apiserver writes it in
 * JSON next to the same pod built by hand with the generated builders, Lease, EndpointSlice and
 * Node the same way, and the table of inline structs checked against fabric8's JSON model of every
 * kind.
 */
class JsonProtoMappingTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private final KubeCodec codec = new KubeCodec(JSON, KubeTypes.standard());

  @Test
  void podJsonMapsToTheMessageBuiltByHand() throws Exception {
    Message decoded = codec.fromJson(JSON.readTree(KubeFixtures.resource("pod.json")), "v1", "Pod");
    assertThat(decoded).isEqualTo(KubeFixtures.pod());
  }

  @Test
  void podMessageMapsToTheJsonTheApiServerWrites() throws Exception {
    JsonNode written = JSON.readTree(codec.toJson(KubeFixtures.pod(), "v1", "Pod"));
    assertThat(written).isEqualTo(JSON.readTree(KubeFixtures.resource("pod.json")));
    // kind and apiVersion come first, like the API server's TypeMeta.
    assertThat(new String(codec.toJson(KubeFixtures.pod(), "v1", "Pod")))
        .startsWith("{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"web-0\"");
  }

  @Test
  void protobufBodyRoundTripsThroughJson() throws Exception {
    byte[] body = ProtoEnvelope.encode("v1", "Pod", KubeFixtures.pod().toByteString());
    byte[] json = codec.toJson(body);
    assertThat(codec.toProtobuf(json)).isEqualTo(body);
    assertThat(codec.convert(body, Encoding.PROTOBUF, Encoding.PROTOBUF)).isSameAs(body);
  }

  @Test
  void leaseMicroTimesKeepMicroseconds() throws Exception {
    String json = """
        {"kind":"Lease","apiVersion":"coordination.k8s.io/v1","metadata":{"name":"edge-node-1",\
        "namespace":"kube-node-lease","resourceVersion":"77"},"spec":{"holderIdentity":"edge-node-1",\
        "leaseDurationSeconds":40,"renewTime":"2026-11-01T10:00:10.123456Z"}}""";
    CoordinationV1.Lease expected = CoordinationV1.Lease.newBuilder()
        .setMetadata(Meta.ObjectMeta.newBuilder().setName("edge-node-1")
            .setNamespace("kube-node-lease").setResourceVersion("77"))
        .setSpec(CoordinationV1.LeaseSpec.newBuilder().setHolderIdentity("edge-node-1")
            .setLeaseDurationSeconds(40)
            .setRenewTime(Meta.MicroTime.newBuilder()
                .setSeconds(Instant.parse("2026-11-01T10:00:10Z").getEpochSecond())
                .setNanos(123_456_000)))
        .build();
    byte[] body = codec.toProtobuf(json.getBytes());
    assertThat(codec.decode(body)).isEqualTo(expected);
    assertThat(JSON.readTree(codec.toJson(body))).isEqualTo(JSON.readTree(json));
  }

  @Test
  void endpointSliceAndNodeMapBothWays() throws Exception {
    String slice = """
        {"kind":"EndpointSlice","apiVersion":"discovery.k8s.io/v1","metadata":{"name":"web-abc",\
        "namespace":"default","labels":{"kubernetes.io/service-name":"web"}},"addressType":"IPv4",\
        "endpoints":[{"addresses":["10.244.0.7"],"conditions":{"ready":true,"serving":true,\
        "terminating":false},"targetRef":{"kind":"Pod","namespace":"default","name":"web-0"},\
        "nodeName":"edge-node-1","zone":"z1","hints":{"forZones":[{"name":"z1"}]}}],\
        "ports":[{"name":"http","protocol":"TCP","port":8080}]}""";
    DiscoveryV1.EndpointSlice expectedSlice = DiscoveryV1.EndpointSlice.newBuilder()
        .setMetadata(Meta.ObjectMeta.newBuilder().setName("web-abc").setNamespace("default")
            .putLabels("kubernetes.io/service-name", "web"))
        .setAddressType("IPv4")
        .addEndpoints(DiscoveryV1.Endpoint.newBuilder().addAddresses("10.244.0.7")
            .setConditions(DiscoveryV1.EndpointConditions.newBuilder().setReady(true)
                .setServing(true).setTerminating(false))
            .setTargetRef(V1.ObjectReference.newBuilder().setKind("Pod").setNamespace("default")
                .setName("web-0"))
            .setNodeName("edge-node-1").setZone("z1")
            .setHints(DiscoveryV1.EndpointHints.newBuilder()
                .addForZones(DiscoveryV1.ForZone.newBuilder().setName("z1"))))
        .addPorts(DiscoveryV1.EndpointPort.newBuilder().setName("http").setProtocol("TCP")
            .setPort(8080))
        .build();
    assertThat(codec.decode(codec.toProtobuf(slice.getBytes()))).isEqualTo(expectedSlice);
    assertThat(JSON.readTree(codec.toJson(expectedSlice, "discovery.k8s.io/v1", "EndpointSlice")))
        .isEqualTo(JSON.readTree(slice));

    String node = """
        {"kind":"Node","apiVersion":"v1","metadata":{"name":"edge-node-1"},\
        "spec":{"podCIDR":"10.244.0.0/24","taints":[{"key":"k","value":"v","effect":"NoSchedule",\
        "timeAdded":"2026-11-01T09:00:00Z"}]},\
        "status":{"capacity":{"cpu":"4","memory":"8041368Ki","pods":"110"},\
        "conditions":[{"type":"Ready","status":"True","lastHeartbeatTime":"2026-11-01T10:00:00Z",\
        "lastTransitionTime":"2026-11-01T09:00:00Z","reason":"KubeletReady","message":"ok"}],\
        "addresses":[{"type":"InternalIP","address":"192.168.1.10"}],\
        "daemonEndpoints":{"kubeletEndpoint":{"Port":10250}},\
        "nodeInfo":{"machineID":"m","systemUUID":"s","bootID":"b","kernelVersion":"6.1",\
        "osImage":"Debian","containerRuntimeVersion":"containerd://1.7","kubeletVersion":"v1.32.0",\
        "kubeProxyVersion":"","operatingSystem":"linux","architecture":"amd64"}}}""";
    V1.Node expectedNode = V1.Node.newBuilder()
        .setMetadata(Meta.ObjectMeta.newBuilder().setName("edge-node-1"))
        .setSpec(V1.NodeSpec.newBuilder().setPodCIDR("10.244.0.0/24")
            .addTaints(V1.Taint.newBuilder().setKey("k").setValue("v").setEffect("NoSchedule")
                .setTimeAdded(KubeFixtures.time("2026-11-01T09:00:00Z"))))
        .setStatus(V1.NodeStatus.newBuilder()
            .putCapacity("cpu", KubeFixtures.q("4")).putCapacity("memory", KubeFixtures.q("8041368Ki"))
            .putCapacity("pods", KubeFixtures.q("110"))
            .addConditions(V1.NodeCondition.newBuilder().setType("Ready").setStatus("True")
                .setLastHeartbeatTime(KubeFixtures.time("2026-11-01T10:00:00Z"))
                .setLastTransitionTime(KubeFixtures.time("2026-11-01T09:00:00Z"))
                .setReason("KubeletReady").setMessage("ok"))
            .addAddresses(V1.NodeAddress.newBuilder().setType("InternalIP")
                .setAddress("192.168.1.10"))
            .setDaemonEndpoints(V1.NodeDaemonEndpoints.newBuilder().setKubeletEndpoint(
                V1.DaemonEndpoint.newBuilder().setPort(10250)))
            .setNodeInfo(V1.NodeSystemInfo.newBuilder().setMachineID("m").setSystemUUID("s")
                .setBootID("b").setKernelVersion("6.1").setOsImage("Debian")
                .setContainerRuntimeVersion("containerd://1.7").setKubeletVersion("v1.32.0")
                .setKubeProxyVersion("").setOperatingSystem("linux").setArchitecture("amd64")))
        .build();
    assertThat(codec.decode(codec.toProtobuf(node.getBytes()))).isEqualTo(expectedNode);
    assertThat(JSON.readTree(codec.toJson(expectedNode, "v1", "Node")))
        .isEqualTo(JSON.readTree(node));
  }

  @Test
  void secretBytesAreBase64AndServicePortsIntOrString() throws Exception {
    String secret = """
        {"kind":"Secret","apiVersion":"v1","metadata":{"name":"s","namespace":"default"},\
        "data":{"token":"c2VjcmV0"},"type":"Opaque"}""";
    V1.Secret s = (V1.Secret) codec.decode(codec.toProtobuf(secret.getBytes()));
    assertThat(s.getDataMap().get("token").toStringUtf8()).isEqualTo("secret");
    assertThat(JSON.readTree(codec.toJson(s, "v1", "Secret"))).isEqualTo(JSON.readTree(secret));

    String service = """
        {"kind":"Service","apiVersion":"v1","metadata":{"name":"web","namespace":"default"},\
        "spec":{"ports":[{"name":"http","protocol":"TCP","port":80,"targetPort":"http"},\
        {"name":"alt","protocol":"TCP","port":81,"targetPort":8081}],"clusterIP":"10.96.0.10",\
        "clusterIPs":["10.96.0.10"],"type":"ClusterIP","sessionAffinity":"None"},\
        "status":{"loadBalancer":{}}}""";
    V1.Service svc = (V1.Service) codec.decode(codec.toProtobuf(service.getBytes()));
    assertThat(svc.getSpec().getPorts(0).getTargetPort().getStrVal()).isEqualTo("http");
    assertThat(svc.getSpec().getPorts(1).getTargetPort().getIntVal()).isEqualTo(8081);
    assertThat(JSON.readTree(codec.toJson(svc, "v1", "Service"))).isEqualTo(JSON.readTree(service));
  }

  @Test
  void wrongJsonTypesAreRefusedWithTheField() {
    assertThatThrownBy(() -> codec.toProtobuf(
        "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"spec\":{\"priority\":\"high\"}}".getBytes()))
        .isInstanceOf(CodecException.class).hasMessageContaining("PodSpec.priority");
    assertThatThrownBy(() -> codec.toProtobuf(
        "{\"kind\":\"Widget\",\"apiVersion\":\"example.com/v1\"}".getBytes()))
        .isInstanceOf(CodecException.class).hasMessageContaining("no protobuf form");
    assertThatThrownBy(() -> codec.toProtobuf("[1]".getBytes()))
        .isInstanceOf(CodecException.class);
    assertThatThrownBy(() -> codec.toJson("{}".getBytes()))
        .isInstanceOf(CodecException.class).hasMessageContaining("does not appear to be a protobuf");
  }

  @Test
  void fieldsNewerThanTheGeneratedClassesAreDropped() throws Exception {
    byte[] body = codec.toProtobuf(
        "{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"c\"},\"data\":{\"a\":\"b\"},\"futureField\":1}"
            .getBytes());
    assertThat(JSON.readTree(codec.toJson(body))).isEqualTo(JSON.readTree(
        "{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"c\"},\"data\":{\"a\":\"b\"}}"));
  }

  /** fabric8 model package of each proto package: its classes carry the JSON property names. */
  private static final Map<String, String> FABRIC8 = Map.ofEntries(
      Map.entry("k8s.io.api.core.v1", "io.fabric8.kubernetes.api.model."),
      Map.entry("k8s.io.apimachinery.pkg.apis.meta.v1", "io.fabric8.kubernetes.api.model."),
      Map.entry("k8s.io.api.apps.v1", "io.fabric8.kubernetes.api.model.apps."),
      Map.entry("k8s.io.api.batch.v1", "io.fabric8.kubernetes.api.model.batch.v1."),
      Map.entry("k8s.io.api.autoscaling.v1", "io.fabric8.kubernetes.api.model.autoscaling.v1."),
      Map.entry("k8s.io.api.policy.v1", "io.fabric8.kubernetes.api.model.policy.v1."),
      Map.entry("k8s.io.api.networking.v1", "io.fabric8.kubernetes.api.model.networking.v1."),
      Map.entry("k8s.io.api.rbac.v1", "io.fabric8.kubernetes.api.model.rbac."),
      Map.entry("k8s.io.api.storage.v1", "io.fabric8.kubernetes.api.model.storage."),
      Map.entry("k8s.io.api.scheduling.v1", "io.fabric8.kubernetes.api.model.scheduling.v1."),
      Map.entry("k8s.io.api.certificates.v1", "io.fabric8.kubernetes.api.model.certificates.v1."),
      Map.entry("k8s.io.api.authentication.v1", "io.fabric8.kubernetes.api.model.authentication."),
      Map.entry("k8s.io.api.authorization.v1", "io.fabric8.kubernetes.api.model.authorization.v1."),
      Map.entry("k8s.io.api.admissionregistration.v1",
          "io.fabric8.kubernetes.api.model.admissionregistration.v1."),
      Map.entry("k8s.io.api.coordination.v1", "io.fabric8.kubernetes.api.model.coordination.v1."),
      Map.entry("k8s.io.api.discovery.v1", "io.fabric8.kubernetes.api.model.discovery.v1."),
      Map.entry("k8s.io.api.events.v1", "io.fabric8.kubernetes.api.model.events.v1."));

  /**
   * Every protobuf field of every message of the kinds a node's components read is a JSON property
   * of the same type in fabric8's model (generated from the API's OpenAPI document), or an inline
   * struct in {@link JsonProtoMapping#INLINE} whose own fields are.
   */
  @Test
  void inlineTableMatchesTheJsonModelOfEveryKind() {
    List<String> problems = new ArrayList<>();
    int checked = 0;
    for (FileDescriptor file : KubeTypes.standard().files()) {
      for (Descriptor d : file.getMessageTypes()) {
        Set<String> json = jsonProperties(FABRIC8.get(file.getPackage()) + d.getName());
        if (json == null) {
          continue;
        }
        checked++;
        if (SPECIAL.contains(d.getName())) {
          continue;
        }
        Set<String> inline = JsonProtoMapping.INLINE.getOrDefault(d.getFullName(), Set.of());
        for (FieldDescriptor f : d.getFields()) {
          if (SKEW.contains(d.getFullName() + "." + f.getName())) {
            continue;
          }
          if (inline.contains(f.getName())) {
            if (json.contains(f.getName())) {
              problems.add(d.getFullName() + "." + f.getName() + " is inline but a JSON property");
            }
            for (String lifted : liftedNames(f.getMessageType())) {
              if (!json.contains(lifted)) {
                problems.add(d.getFullName() + "." + f.getName() + "." + lifted + " not in JSON");
              }
            }
          } else if (!json.contains(JsonProtoMapping.jsonName(f))) {
            problems.add(d.getFullName() + "." + f.getName() + " is not a JSON property");
          }
        }
      }
    }
    assertThat(checked).isGreaterThan(200);
    assertThat(problems).isEmpty();
  }

  /** Messages with a JSON form of their own (a string, a number, inline JSON). */
  private static final Set<String> SPECIAL =
      Set.of("Time", "MicroTime", "Duration", "FieldsV1", "Quantity", "IntOrString", "RawExtension");

  /**
   * Fields of client-java-proto (Kubernetes 1.30) that fabric8 7.8 (1.33) no longer has: version
   * skew, not a mapping rule. {@code PodResourceClaim.source} became two fields of its own in 1.31.
   */
  private static final Set<String> SKEW = Set.of("k8s.io.api.core.v1.PodResourceClaim.source");

  private static Set<String> liftedNames(Descriptor d) {
    Set<String> out = new HashSet<>();
    Set<String> inline = JsonProtoMapping.INLINE.getOrDefault(d.getFullName(), Set.of());
    for (FieldDescriptor f : d.getFields()) {
      if (inline.contains(f.getName())) {
        out.addAll(liftedNames(f.getMessageType()));
      } else {
        out.add(JsonProtoMapping.jsonName(f));
      }
    }
    return out;
  }

  private static Set<String> jsonProperties(String className) {
    try {
      Class<?> c = Class.forName(className);
      JsonPropertyOrder order = c.getAnnotation(JsonPropertyOrder.class);
      return order == null ? null : Set.of(order.value());
    } catch (ClassNotFoundException e) {
      return null;
    }
  }
}
