package dev.portage.control.source.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.portage.control.source.Kinds;
import dev.portage.control.store.Resource;
import dev.portage.control.store.ResourceKey;
import dev.portage.control.store.ResourceStore;
import dev.portage.control.store.SourceObject;
import dev.portage.core.testing.MockApiServerExtension;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(MockApiServerExtension.class)
class KubernetesSourceTest {

  private static final Duration WAIT = Duration.ofSeconds(10);
  private static final ResourceDefinitionContext TAG_ROUTES = WatchedKind.ALL.get(5).context();

  KubernetesMockServer server;
  KubernetesClient client;

  private final ResourceStore store = new ResourceStore();
  private KubernetesSource source;

  @AfterEach
  void closeSource() {
    if (source != null) {
      source.close();
    }
  }

  private KubernetesSource start(KubernetesSource.Options options) {
    source = new KubernetesSource(client, store, options);
    source.start();
    await().atMost(WAIT).until(source::isSynced);
    return source;
  }

  private static GenericKubernetesResource tagRoute(String ns, String name, int priority) {
    return new GenericKubernetesResourceBuilder()
        .withApiVersion("dubbo.apache.org/v1alpha1")
        .withKind("TagRoute")
        .withNewMetadata().withNamespace(ns).withName(name).endMetadata()
        .withAdditionalProperties(Map.of("spec", Map.of("priority", priority, "key", "shop", "enabled", true)))
        .build();
  }

  private Optional<Resource> stored(String kind, String ns, String name) {
    return store.get(new ResourceKey(kind, ns, name));
  }

  @Test
  void tagRouteServiceAndEndpointSliceFollowTheCluster() {
    client.genericKubernetesResources(TAG_ROUTES).inNamespace("shop").resource(tagRoute("shop", "before", 1)).create();
    start(KubernetesSource.Options.allNamespaces());

    // present before start: loaded by the first list
    assertThat(stored(Kinds.TAG_ROUTE, "shop", "before")).isPresent();

    client.genericKubernetesResources(TAG_ROUTES).inNamespace("shop").resource(tagRoute("shop", "gray", 5)).create();
    client.services().inNamespace("default").resource(new ServiceBuilder()
        .withNewMetadata().withName("fast").withNamespace("default").endMetadata()
        .withNewSpec().addNewPort().withName("http").withPort(8080).endPort().endSpec()
        .build()).create();
    client.discovery().v1().endpointSlices().inNamespace("default").resource(new EndpointSliceBuilder()
        .withNewMetadata().withName("fast-abc").withNamespace("default")
        .addToLabels("kubernetes.io/service-name", "fast").endMetadata()
        .withAddressType("IPv4")
        .addNewEndpoint().withAddresses("127.0.0.1").endEndpoint()
        .addNewPort().withName("http").withPort(9101).endPort()
        .build()).create();

    await().atMost(WAIT).until(() -> stored(Kinds.TAG_ROUTE, "shop", "gray").isPresent()
        && stored(Kinds.SERVICE, "default", "fast").isPresent()
        && stored(Kinds.ENDPOINT_SLICE, "default", "fast-abc").isPresent());

    Resource gray = stored(Kinds.TAG_ROUTE, "shop", "gray").orElseThrow();
    assertThat(gray.body().path("apiVersion").asText()).isEqualTo("dubbo.apache.org/v1alpha1");
    assertThat(gray.body().path("kind").asText()).isEqualTo("TagRoute");
    assertThat(gray.spec().path("priority").asInt()).isEqualTo(5);
    assertThat(gray.revision()).isGreaterThanOrEqualTo(ResourceVersions.hint(gray.sourceVersion()));
    Resource slice = stored(Kinds.ENDPOINT_SLICE, "default", "fast-abc").orElseThrow();
    assertThat(slice.body().path("ports").get(0).path("port").asInt()).isEqualTo(9101);
    assertThat(slice.body().path("metadata").path("labels").path("kubernetes.io/service-name").asText())
        .isEqualTo("fast");
    assertThat(stored(Kinds.SERVICE, "default", "fast").orElseThrow().spec().path("ports").get(0).path("port").asInt())
        .isEqualTo(8080);

    // update: the spec change reaches the store with a higher revision
    long kindRevBefore = store.kindRevision(Kinds.TAG_ROUTE);
    client.genericKubernetesResources(TAG_ROUTES).inNamespace("shop").withName("gray")
        .edit(r -> {
          r.setAdditionalProperty("spec", Map.of("priority", 9, "key", "shop", "enabled", true));
          return r;
        });
    await().atMost(WAIT).until(() -> stored(Kinds.TAG_ROUTE, "shop", "gray")
        .map(r -> r.spec().path("priority").asInt() == 9).orElse(false));
    Resource updated = stored(Kinds.TAG_ROUTE, "shop", "gray").orElseThrow();
    assertThat(updated.revision()).isGreaterThan(gray.revision());
    assertThat(store.kindRevision(Kinds.TAG_ROUTE)).isGreaterThan(kindRevBefore);
    assertThat(updated.revision()).isGreaterThanOrEqualTo(ResourceVersions.hint(updated.sourceVersion()));

    // delete: gone from the store, kind revision grows again
    long beforeDelete = store.kindRevision(Kinds.TAG_ROUTE);
    client.genericKubernetesResources(TAG_ROUTES).inNamespace("shop").withName("gray").delete();
    client.services().inNamespace("default").withName("fast").delete();
    await().atMost(WAIT).until(() -> stored(Kinds.TAG_ROUTE, "shop", "gray").isEmpty()
        && stored(Kinds.SERVICE, "default", "fast").isEmpty());
    assertThat(store.kindRevision(Kinds.TAG_ROUTE)).isGreaterThan(beforeDelete);
    assertThat(stored(Kinds.TAG_ROUTE, "shop", "before")).isPresent();
    assertThat(source.unavailableKinds()).isEmpty();
  }

  @Test
  void firstListReplacesStaleObjectsOfTheKind() {
    JsonNode stale = client.getKubernetesSerialization().convertValue(tagRoute("shop", "stale", 1), JsonNode.class);
    store.put(SourceObject.of(stale, "1"), 0);
    client.genericKubernetesResources(TAG_ROUTES).inNamespace("shop").resource(tagRoute("shop", "live", 2)).create();

    start(KubernetesSource.Options.allNamespaces());

    assertThat(store.list(Kinds.TAG_ROUTE).items()).extracting(r -> r.key().name()).containsExactly("live");
  }

  @Test
  void missingCrdIsReportedAndTheOtherKindsKeepWorking() {
    server.expect().get()
        .withPath("/apis/dubbo.apache.org/v1alpha1/authenticationpolicies?resourceVersion=0")
        .andReturn(404, Map.of("kind", "Status", "apiVersion", "v1", "status", "Failure", "reason", "NotFound",
            "code", 404, "message", "the server could not find the requested resource"))
        .always();

    start(KubernetesSource.Options.allNamespaces());
    assertThat(source.unavailableKinds()).containsExactly(Kinds.AUTHENTICATION_POLICY);

    client.genericKubernetesResources(TAG_ROUTES).inNamespace("shop").resource(tagRoute("shop", "gray", 5)).create();
    await().atMost(WAIT).until(() -> stored(Kinds.TAG_ROUTE, "shop", "gray").isPresent());
  }

  @Test
  void namespaceRestrictionIgnoresOtherNamespaces() {
    client.genericKubernetesResources(TAG_ROUTES).inNamespace("other").resource(tagRoute("other", "x", 1)).create();
    start(new KubernetesSource.Options("shop", Duration.ZERO));
    client.genericKubernetesResources(TAG_ROUTES).inNamespace("other").resource(tagRoute("other", "y", 1)).create();
    client.genericKubernetesResources(TAG_ROUTES).inNamespace("shop").resource(tagRoute("shop", "z", 1)).create();

    await().atMost(WAIT).until(() -> stored(Kinds.TAG_ROUTE, "shop", "z").isPresent());
    assertThat(store.list(Kinds.TAG_ROUTE).items()).extracting(r -> r.key().name()).containsExactly("z");
    assertThat(source.describe()).contains("namespace shop");
  }

  @Test
  void notSyncedBeforeStartAndRejectsBadOptions() {
    source = new KubernetesSource(client, store, KubernetesSource.Options.allNamespaces());
    assertThat(source.isSynced()).isFalse();
    assertThatThrownBy(() -> new KubernetesSource.Options(null, Duration.ofSeconds(-1)))
        .hasMessageContaining("resyncPeriod: PT-1S (expected: >= 0)");
    assertThatThrownBy(() -> new KubernetesSource.Options("", Duration.ZERO))
        .hasMessageContaining("namespace");
  }
}
