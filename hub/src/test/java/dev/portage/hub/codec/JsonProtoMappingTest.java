package dev.portage.hub.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.protobuf.ByteString;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.Message;
import dev.portage.hub.codec.pb.CoordinationV1;
import dev.portage.hub.codec.pb.DiscoveryV1;
import dev.portage.hub.codec.pb.EventsV1;
import io.kubernetes.client.proto.IntStr;
import io.kubernetes.client.proto.Meta;
import io.kubernetes.client.proto.Resource;
import io.kubernetes.client.proto.V1;
import io.kubernetes.client.proto.V1Apps;
import io.kubernetes.client.proto.V1Networking;
import java.io.IOException;
import java.io.InputStream;
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

  static byte[] fixture(String name) throws IOException {
    try (InputStream in = JsonProtoMappingTest.class.getResourceAsStream("/kube/" + name)) {
      assertThat(in).as(name).isNotNull();
      return in.readAllBytes();
    }
  }

  private static Meta.Time time(String rfc3339) {
    return Meta.Time.newBuilder().setSeconds(Instant.parse(rfc3339).getEpochSecond()).build();
  }

  private static Resource.Quantity q(String s) {
    return Resource.Quantity.newBuilder().setString(s).build();
  }

  private static V1.LocalObjectReference ref(String name) {
    return V1.LocalObjectReference.newBuilder().setName(name).build();
  }

  /** {@code kube/pod.json}, built with the generated builders. */
  static V1.Pod handBuiltPod() {
    V1.Container app = V1.Container.newBuilder()
        .setName("app").setImage("registry.example/app:1.4.2")
        .addCommand("/app").addCommand("--port=8080")
        .addPorts(V1.ContainerPort.newBuilder().setName("http").setContainerPort(8080)
            .setProtocol("TCP"))
        .addEnvFrom(V1.EnvFromSource.newBuilder().setConfigMapRef(
            V1.ConfigMapEnvSource.newBuilder().setLocalObjectReference(ref("web-env"))))
        .addEnv(V1.EnvVar.newBuilder().setName("MODE").setValue("edge"))
        .addEnv(V1.EnvVar.newBuilder().setName("TOKEN").setValueFrom(V1.EnvVarSource.newBuilder()
            .setSecretKeyRef(V1.SecretKeySelector.newBuilder()
                .setLocalObjectReference(ref("web-secret")).setKey("token").setOptional(true))))
        .setResources(V1.ResourceRequirements.newBuilder()
            .putLimits("memory", q("128Mi"))
            .putRequests("cpu", q("50m")).putRequests("memory", q("64Mi")))
        .addVolumeMounts(V1.VolumeMount.newBuilder().setName("config").setReadOnly(true)
            .setMountPath("/etc/app"))
        .setLivenessProbe(V1.Probe.newBuilder()
            .setHandler(V1.ProbeHandler.newBuilder().setHttpGet(V1.HTTPGetAction.newBuilder()
                .setPath("/healthz")
                .setPort(IntStr.IntOrString.newBuilder().setType(1).setStrVal("http"))
                .setScheme("HTTP")))
            .setInitialDelaySeconds(3).setTimeoutSeconds(1).setPeriodSeconds(10)
            .setSuccessThreshold(1).setFailureThreshold(3))
        .setReadinessProbe(V1.Probe.newBuilder()
            .setHandler(V1.ProbeHandler.newBuilder().setTcpSocket(V1.TCPSocketAction.newBuilder()
                .setPort(IntStr.IntOrString.newBuilder().setType(0).setIntVal(8080))))
            .setTimeoutSeconds(1).setPeriodSeconds(5).setSuccessThreshold(1).setFailureThreshold(3))
        .setTerminationMessagePath("/dev/termination-log")
        .setTerminationMessagePolicy("File")
        .setImagePullPolicy("IfNotPresent")
        .build();
    V1.PodSpec spec = V1.PodSpec.newBuilder()
        .addVolumes(V1.Volume.newBuilder().setName("config").setVolumeSource(
            V1.VolumeSource.newBuilder().setConfigMap(V1.ConfigMapVolumeSource.newBuilder()
                .setLocalObjectReference(ref("web-config")).setDefaultMode(420))))
        .addVolumes(V1.Volume.newBuilder().setName("kube-api-access").setVolumeSource(
            V1.VolumeSource.newBuilder().setProjected(V1.ProjectedVolumeSource.newBuilder()
                .addSources(V1.VolumeProjection.newBuilder().setServiceAccountToken(
                    V1.ServiceAccountTokenProjection.newBuilder().setExpirationSeconds(3607)
                        .setPath("token")))
                .addSources(V1.VolumeProjection.newBuilder().setConfigMap(
                    V1.ConfigMapProjection.newBuilder().setLocalObjectReference(
                        ref("kube-root-ca.crt"))
                        .addItems(V1.KeyToPath.newBuilder().setKey("ca.crt").setPath("ca.crt"))))
                .setDefaultMode(420))))
        .addContainers(app)
        .setRestartPolicy("Always")
        .setTerminationGracePeriodSeconds(30)
        .setDnsPolicy("ClusterFirst")
        .putNodeSelector("kubernetes.io/os", "linux")
        .setServiceAccountName("default")
        .setServiceAccount("default")
        .setNodeName("edge-node-1")
        .setSecurityContext(V1.PodSecurityContext.getDefaultInstance())
        .setSchedulerName("default-scheduler")
        .addTolerations(V1.Toleration.newBuilder().setKey("node.kubernetes.io/not-ready")
            .setOperator("Exists").setEffect("NoExecute").setTolerationSeconds(300))
        .setPriority(0)
        .setEnableServiceLinks(true)
        .setPreemptionPolicy("PreemptLowerPriority")
        .build();
    V1.PodStatus status = V1.PodStatus.newBuilder()
        .setPhase("Running")
        .addConditions(V1.PodCondition.newBuilder().setType("Ready").setStatus("True")
            .setLastProbeTime(Meta.Time.getDefaultInstance())
            .setLastTransitionTime(time("2026-11-01T10:00:05Z")))
        .setHostIP("192.168.1.10")
        .setPodIP("10.244.0.7")
        .addPodIPs(V1.PodIP.newBuilder().setIp("10.244.0.7"))
        .setStartTime(time("2026-11-01T10:00:01Z"))
        .addContainerStatuses(V1.ContainerStatus.newBuilder().setName("app")
            .setState(V1.ContainerState.newBuilder().setRunning(V1.ContainerStateRunning
                .newBuilder().setStartedAt(time("2026-11-01T10:00:02Z"))))
            .setLastState(V1.ContainerState.getDefaultInstance())
            .setReady(true).setRestartCount(0).setImage("registry.example/app:1.4.2")
            .setImageID("registry.example/app@sha256:0123").setContainerID("containerd://abc")
            .setStarted(true))
        .setQosClass("Burstable")
        .build();
    Meta.ObjectMeta meta = Meta.ObjectMeta.newBuilder()
        .setName("web-0").setGenerateName("web-").setNamespace("default")
        .setUid("6f1c2a7e-0000-4000-8000-000000000001").setResourceVersion("1042")
        .setCreationTimestamp(time("2026-11-01T10:00:00Z"))
        .putLabels("app", "web").putLabels("pod-template-hash", "5d8f7c9b4")
        .putAnnotations("kubernetes.io/config.seen", "2026-11-01T10:00:01.123456789Z")
        .addOwnerReferences(Meta.OwnerReference.newBuilder().setApiVersion("apps/v1")
            .setKind("ReplicaSet").setName("web-5d8f7c9b4")
            .setUid("0b7e2d4c-1111-4000-8000-000000000000").setController(true)
            .setBlockOwnerDeletion(true))
        .addManagedFields(Meta.ManagedFieldsEntry.newBuilder().setManager("kube-controller-manager")
            .setOperation("Update").setApiVersion("v1").setTime(time("2026-11-01T10:00:00Z"))
            .setFieldsType("FieldsV1")
            .setFieldsV1(Meta.FieldsV1.newBuilder().setRaw(ByteString.copyFromUtf8(
                "{\"f:metadata\":{\"f:labels\":{\".\":{},\"f:app\":{}}}}"))))
        .build();
    return V1.Pod.newBuilder().setMetadata(meta).setSpec(spec).setStatus(status).build();
  }

  @Test
  void podJsonMapsToTheMessageBuiltByHand() throws Exception {
    Message decoded = codec.fromJson(JSON.readTree(fixture("pod.json")), "v1", "Pod");
    assertThat(decoded).isEqualTo(handBuiltPod());
  }

  @Test
  void podMessageMapsToTheJsonTheApiServerWrites() throws Exception {
    JsonNode written = JSON.readTree(codec.toJson(handBuiltPod(), "v1", "Pod"));
    assertThat(written).isEqualTo(JSON.readTree(fixture("pod.json")));
    // kind and apiVersion come first, like the API server's TypeMeta.
    assertThat(new String(codec.toJson(handBuiltPod(), "v1", "Pod")))
        .startsWith("{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"web-0\"");
  }

  @Test
  void protobufBodyRoundTripsThroughJson() throws Exception {
    byte[] body = ProtoEnvelope.encode("v1", "Pod", handBuiltPod().toByteString());
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
                .setTimeAdded(time("2026-11-01T09:00:00Z"))))
        .setStatus(V1.NodeStatus.newBuilder()
            .putCapacity("cpu", q("4")).putCapacity("memory", q("8041368Ki"))
            .putCapacity("pods", q("110"))
            .addConditions(V1.NodeCondition.newBuilder().setType("Ready").setStatus("True")
                .setLastHeartbeatTime(time("2026-11-01T10:00:00Z"))
                .setLastTransitionTime(time("2026-11-01T09:00:00Z"))
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
