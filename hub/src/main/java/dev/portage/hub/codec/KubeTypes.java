package dev.portage.hub.codec;

import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.Message;
import dev.portage.hub.codec.pb.CoordinationV1;
import dev.portage.hub.codec.pb.DiscoveryV1;
import dev.portage.hub.codec.pb.EventsV1;
import io.kubernetes.client.proto.Meta;
import io.kubernetes.client.proto.V1;
import io.kubernetes.client.proto.V1Admissionregistration;
import io.kubernetes.client.proto.V1Apps;
import io.kubernetes.client.proto.V1Authentication;
import io.kubernetes.client.proto.V1Authorization;
import io.kubernetes.client.proto.V1Autoscaling;
import io.kubernetes.client.proto.V1Batch;
import io.kubernetes.client.proto.V1Certificates;
import io.kubernetes.client.proto.V1Networking;
import io.kubernetes.client.proto.V1Policy;
import io.kubernetes.client.proto.V1Rbac;
import io.kubernetes.client.proto.V1Scheduling;
import io.kubernetes.client.proto.V1Storage;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The Kubernetes kinds the hub can encode in protobuf, by {@code apiVersion} and {@code kind}, with
 * their generated message classes: {@code io.kubernetes:client-java-proto} for the groups it
 * carries, the hub's own generated classes for coordination.k8s.io, discovery.k8s.io and
 * events.k8s.io. Kinds of other groups (custom resources, aggregated APIs) have no protobuf form
 * and are answered in JSON, as kube-apiserver does for custom resources. Classes are looked up
 * lazily (the jar holds thousands) and remembered. Thread-safe.
 */
public final class KubeTypes {

  private static final KubeTypes STANDARD = new KubeTypes();

  /** Outer class per group/version: the generated message classes are its nested classes. */
  private final Map<String, Class<?>> outerClasses = new LinkedHashMap<>();
  private final List<FileDescriptor> files = new ArrayList<>();
  private final Map<String, Optional<Message>> prototypes = new ConcurrentHashMap<>();

  private KubeTypes() {
    register("v1", V1.class, V1.getDescriptor());
    register("apps/v1", V1Apps.class, V1Apps.getDescriptor());
    register("batch/v1", V1Batch.class, V1Batch.getDescriptor());
    register("autoscaling/v1", V1Autoscaling.class, V1Autoscaling.getDescriptor());
    register("policy/v1", V1Policy.class, V1Policy.getDescriptor());
    register("networking.k8s.io/v1", V1Networking.class, V1Networking.getDescriptor());
    register("rbac.authorization.k8s.io/v1", V1Rbac.class, V1Rbac.getDescriptor());
    register("storage.k8s.io/v1", V1Storage.class, V1Storage.getDescriptor());
    register("scheduling.k8s.io/v1", V1Scheduling.class, V1Scheduling.getDescriptor());
    register("certificates.k8s.io/v1", V1Certificates.class, V1Certificates.getDescriptor());
    register("authentication.k8s.io/v1", V1Authentication.class, V1Authentication.getDescriptor());
    register("authorization.k8s.io/v1", V1Authorization.class, V1Authorization.getDescriptor());
    register("admissionregistration.k8s.io/v1", V1Admissionregistration.class,
        V1Admissionregistration.getDescriptor());
    register("coordination.k8s.io/v1", CoordinationV1.class, CoordinationV1.getDescriptor());
    register("discovery.k8s.io/v1", DiscoveryV1.class, DiscoveryV1.getDescriptor());
    register("events.k8s.io/v1", EventsV1.class, EventsV1.getDescriptor());
    register("meta.k8s.io/v1", Meta.class, Meta.getDescriptor());
  }

  /** The registry of every kind above. */
  public static KubeTypes standard() {
    return STANDARD;
  }

  private void register(String groupVersion, Class<?> outer, FileDescriptor file) {
    // The descriptor is touched so a class whose runtime does not link fails here, at start.
    if (file.getMessageTypes().isEmpty()) {
      throw new IllegalStateException("no messages in " + file.getName());
    }
    outerClasses.put(groupVersion, outer);
    files.add(file);
  }

  /** The descriptors of every group/version, for tests. */
  List<FileDescriptor> files() {
    return List.copyOf(files);
  }

  /** The group/versions whose kinds have a protobuf form. */
  public Set<String> groupVersions() {
    return outerClasses.keySet();
  }

  /** Whether the kinds of {@code groupVersion} ({@code v1}, {@code apps/v1}) have a protobuf form. */
  public boolean hasGroupVersion(String groupVersion) {
    return outerClasses.containsKey(groupVersion);
  }

  /**
   * The default instance of {@code kind}'s generated message, or empty when the kind has no
   * protobuf form here. {@code Status} is meta/v1's whatever group it is answered for, as the API
   * server does.
   */
  public Optional<Message> prototype(String apiVersion, String kind) {
    if (kind == null || kind.isEmpty() || apiVersion == null) {
      return Optional.empty();
    }
    String gv = kind.equals("Status") || kind.equals("WatchEvent") ? "meta.k8s.io/v1" : apiVersion;
    return prototypes.computeIfAbsent(gv + "/" + kind, k -> load(gv, kind));
  }

  private Optional<Message> load(String groupVersion, String kind) {
    Class<?> outer = outerClasses.get(groupVersion);
    if (outer == null || !isIdentifier(kind)) {
      return Optional.empty();
    }
    try {
      Class<?> c = Class.forName(outer.getName() + "$" + kind, true, outer.getClassLoader());
      if (!Message.class.isAssignableFrom(c) || c.getEnclosingClass() != outer) {
        return Optional.empty();
      }
      return Optional.of((Message) c.getMethod("getDefaultInstance").invoke(null));
    } catch (ClassNotFoundException e) {
      return Optional.empty();
    } catch (ReflectiveOperationException | LinkageError e) {
      throw new IllegalStateException("cannot load the protobuf class of " + groupVersion + " "
          + kind, e);
    }
  }

  private static boolean isIdentifier(String kind) {
    if (!Character.isUpperCase(kind.charAt(0))) {
      return false;
    }
    for (int i = 0; i < kind.length(); i++) {
      if (!Character.isLetterOrDigit(kind.charAt(i))) {
        return false;
      }
    }
    return true;
  }
}
