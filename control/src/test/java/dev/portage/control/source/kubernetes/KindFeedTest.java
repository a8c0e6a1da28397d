package dev.portage.control.source.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;

import dev.portage.control.source.Kinds;
import dev.portage.control.store.ResourceKey;
import dev.portage.control.store.ResourceStore;
import dev.portage.control.store.StoreEvent;
import dev.portage.control.store.StoreListener;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Drives the informer handler in the order fabric8 calls it, against a real store. */
class KindFeedTest {

  private static final WatchedKind TAG_ROUTE = WatchedKind.ALL.get(5);
  private static final WatchedKind SERVICE = WatchedKind.ALL.get(6);
  private static final ResourceKey GRAY = new ResourceKey(Kinds.TAG_ROUTE, "shop", "gray");

  private final ResourceStore store = new ResourceStore();
  private final KubernetesSerialization serialization = new KubernetesSerialization();

  private static GenericKubernetesResource tag(String name, String rv, int priority) {
    return new GenericKubernetesResourceBuilder()
        .withApiVersion("dubbo.apache.org/v1alpha1").withKind("TagRoute")
        .withNewMetadata().withNamespace("shop").withName(name).withResourceVersion(rv).endMetadata()
        .withAdditionalProperties(Map.of("spec", Map.of("priority", priority)))
        .build();
  }

  @Test
  void revisionsFollowResourceVersionsAndSurviveARestart() {
    KindFeed feed = new KindFeed(TAG_ROUTE, store, serialization);
    List<StoreEvent> events = new ArrayList<>();
    store.watch(Set.of(), Runnable::run, new StoreListener() {
      @Override
      public void onEvent(StoreEvent e) {
        events.add(e);
      }

      @Override
      public void onResync(long revision) {}
    });

    feed.onBeforeList(null);
    feed.onAdd(tag("gray", "5000", 1));
    feed.onAdd(tag("blue", "4000", 1));
    assertThat(store.size()).as("nothing stored before the list completes").isZero();
    assertThat(feed.isSynced()).isFalse();
    feed.onList("5001", false);

    assertThat(feed.isSynced()).isTrue();
    assertThat(store.kindRevision(Kinds.TAG_ROUTE)).isEqualTo(5001);
    assertThat(events).hasSize(2).allMatch(e -> e.revision() == 5001);

    feed.onUpdate(tag("gray", "5000", 1), tag("gray", "5002", 7));
    assertThat(store.get(GRAY).orElseThrow().revision()).isEqualTo(5002);
    assertThat(store.get(GRAY).orElseThrow().spec().path("priority").asInt()).isEqualTo(7);

    // a resync re-delivers the same object: nothing changes
    feed.onUpdate(tag("gray", "5002", 7), tag("gray", "5002", 7));
    assertThat(store.revision()).isEqualTo(5002);

    feed.onDelete(tag("blue", "5003", 1), false);
    assertThat(store.kindRevision(Kinds.TAG_ROUTE)).isEqualTo(5003);
    assertThat(events).extracting(StoreEvent::type)
        .containsExactly(StoreEvent.Type.ADDED, StoreEvent.Type.ADDED, StoreEvent.Type.MODIFIED, StoreEvent.Type.DELETED);

    // a restarted control plane lists the same cluster state: revision not below what clients saw
    ResourceStore restarted = new ResourceStore();
    KindFeed again = new KindFeed(TAG_ROUTE, restarted, serialization);
    again.onAdd(tag("gray", "5002", 7));
    again.onList("5003", false);
    assertThat(restarted.kindRevision(Kinds.TAG_ROUTE)).isEqualTo(5003);
  }

  @Test
  void nonNumericResourceVersionsStillGiveGrowingRevisions() {
    KindFeed feed = new KindFeed(TAG_ROUTE, store, serialization);
    feed.onList("abc", true);
    feed.onAdd(tag("gray", "v-one", 1));
    long first = store.revision();
    feed.onUpdate(tag("gray", "v-one", 1), tag("gray", "v-two", 2));
    assertThat(first).isEqualTo(1);
    assertThat(store.revision()).isEqualTo(2);
    assertThat(store.get(GRAY).orElseThrow().sourceVersion()).isEqualTo("v-two");
  }

  @Test
  void listItemsWithoutApiVersionAndKindGetThemFromTheWatchedKind() {
    KindFeed feed = new KindFeed(SERVICE, store, serialization);
    GenericKubernetesResource bare = new GenericKubernetesResourceBuilder()
        .withNewMetadata().withNamespace("default").withName("web").withResourceVersion("12")
        .addNewManagedField().withManager("kubectl").endManagedField().endMetadata()
        .build();
    feed.onAdd(bare);
    feed.onList("12", false);

    var web = store.get(new ResourceKey(Kinds.SERVICE, "default", "web")).orElseThrow();
    assertThat(web.body().path("apiVersion").asText()).isEqualTo("v1");
    assertThat(web.body().path("kind").asText()).isEqualTo("Service");
    assertThat(web.body().path("metadata").has("managedFields")).isFalse();
  }

  @Test
  void objectWithoutNameIsSkippedNotFatal() {
    KindFeed feed = new KindFeed(TAG_ROUTE, store, serialization);
    feed.onList("1", true);
    feed.onAdd(new GenericKubernetesResourceBuilder().withNewMetadata().withNamespace("shop").endMetadata().build());
    feed.onAdd(tag("gray", "2", 1));
    assertThat(store.list(Kinds.TAG_ROUTE).items()).extracting(r -> r.key().name()).containsExactly("gray");
  }

  @Test
  void resourceVersionHints() {
    assertThat(ResourceVersions.hint("123456")).isEqualTo(123456);
    assertThat(ResourceVersions.hint("")).isZero();
    assertThat(ResourceVersions.hint(null)).isZero();
    assertThat(ResourceVersions.hint("12a")).isZero();
    assertThat(ResourceVersions.hint("-5")).isZero();
    assertThat(ResourceVersions.hint("9999999999999999999999")).isZero();
  }

  @Test
  void watchedKindsAreTheSupportedKinds() {
    assertThat(WatchedKind.ALL).extracting(WatchedKind::storeKind).containsExactlyElementsOf(Kinds.ALL);
  }
}
