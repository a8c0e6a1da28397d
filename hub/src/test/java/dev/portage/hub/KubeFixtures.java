package dev.portage.hub;

import com.google.protobuf.ByteString;
import io.kubernetes.client.proto.IntStr;
import io.kubernetes.client.proto.Meta;
import io.kubernetes.client.proto.Resource;
import io.kubernetes.client.proto.V1;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.time.Instant;

/**
 * Kubernetes objects for tests, built by hand with the generated protobuf builders, next to the
 * JSON the API server writes for the same objects ({@code src/test/resources/kube}): the
 * independent pair the JSON/protobuf mapping is checked against.
 */
public final class KubeFixtures {

  private KubeFixtures() {}

  /** A file under {@code src/test/resources/kube}. */
  public static byte[] resource(String name) {
    try (InputStream in = KubeFixtures.class.getResourceAsStream("/kube/" + name)) {
      if (in == null) {
        throw new IllegalArgumentException("no test resource kube/" + name);
      }
      return in.readAllBytes();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public static Meta.Time time(String rfc3339) {
    return Meta.Time.newBuilder().setSeconds(Instant.parse(rfc3339).getEpochSecond()).build();
  }

  public static Resource.Quantity q(String s) {
    return Resource.Quantity.newBuilder().setString(s).build();
  }

  static V1.LocalObjectReference ref(String name) {
    return V1.LocalObjectReference.newBuilder().setName(name).build();
  }

  /** {@code kube/pod.json}, built with the generated builders. */
  public static V1.Pod pod() {
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
}
