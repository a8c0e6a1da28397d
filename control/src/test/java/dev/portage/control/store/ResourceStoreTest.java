package dev.portage.control.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Executor;
import org.junit.jupiter.api.Test;

class ResourceStoreTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String TAG = "dubbo.apache.org/v1alpha1/TagRoute";
  private static final String SVC = "v1/Service";

  /** Runs deliveries inline on the test thread, after the store released its lock. */
  private static final Executor DIRECT = Runnable::run;

  private final ResourceStore store = new ResourceStore();

  private static SourceObject tag(String name, String rv, int priority) {
    return SourceObject.of(json("""
        {"apiVersion":"dubbo.apache.org/v1alpha1","kind":"TagRoute",
         "metadata":{"name":"%s","namespace":"default","resourceVersion":"%s"},
         "spec":{"priority":%d}}""".formatted(name, rv, priority)), rv);
  }

  private static SourceObject svc(String name) {
    return SourceObject.of(json("""
        {"apiVersion":"v1","kind":"Service","metadata":{"name":"%s","namespace":"default"}}""".formatted(name)), "1");
  }

  private static JsonNode json(String s) {
    try {
      return JSON.readTree(s);
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  @Test
  void putAssignsGrowingRevisionsPerKind() {
    assertThat(store.revision()).isZero();
    long r1 = store.put(tag("a", "1", 1), 0);
    long r2 = store.put(svc("web"), 0);
    assertThat(r1).isEqualTo(1);
    assertThat(r2).isEqualTo(2);
    assertThat(store.kindRevision(TAG)).isEqualTo(1);
    assertThat(store.kindRevision(SVC)).isEqualTo(2);
    KindSnapshot tags = store.list(TAG);
    assertThat(tags.revision()).isEqualTo(1);
    assertThat(tags.items()).extracting(r -> r.key().name()).containsExactly("a");
  }

  @Test
  void revisionHintFromTheSourceWins() {
    assertThat(store.put(tag("a", "500", 1), 500)).isEqualTo(500);
    // a hint below the current revision never moves it backwards
    assertThat(store.put(tag("b", "7", 1), 7)).isEqualTo(501);
  }

  @Test
  void unchangedObjectIsNoChangeEvenWithANewResourceVersion() {
    List<StoreEvent> seen = new ArrayList<>();
    store.put(tag("a", "1", 1), 0);
    store.watch(Set.of(), DIRECT, listener(seen, new ArrayList<>()));
    assertThat(store.put(tag("a", "2", 1), 0)).isEqualTo(1);
    assertThat(seen).isEmpty();
    assertThat(store.get(new ResourceKey(TAG, "default", "a")).orElseThrow().sourceVersion()).isEqualTo("2");
  }

  @Test
  void watchDeliversAddModifyDeleteInOrder() {
    List<StoreEvent> seen = new ArrayList<>();
    Watch w = store.watch(Set.of(TAG), DIRECT, listener(seen, new ArrayList<>()));
    store.put(tag("a", "1", 1), 0);
    store.put(svc("ignored"), 0);
    store.put(tag("a", "2", 2), 0);
    store.delete(new ResourceKey(TAG, "default", "a"), 0);
    store.delete(new ResourceKey(TAG, "default", "missing"), 0);
    assertThat(seen).extracting(StoreEvent::type)
        .containsExactly(StoreEvent.Type.ADDED, StoreEvent.Type.MODIFIED, StoreEvent.Type.DELETED);
    assertThat(seen).extracting(StoreEvent::revision).containsExactly(1L, 3L, 4L);
    w.close();
    store.put(tag("b", "1", 1), 0);
    assertThat(seen).hasSize(3);
    assertThat(store.watchCount()).isZero();
  }

  @Test
  void replaceKindIsOneChangeWithOneRevision() {
    store.put(tag("a", "1", 1), 0);
    store.put(tag("b", "1", 1), 0);
    List<StoreEvent> seen = new ArrayList<>();
    store.watch(Set.of(), DIRECT, listener(seen, new ArrayList<>()));
    long rev = store.replaceKind(TAG, List.of(tag("b", "2", 9), tag("c", "1", 1)), 0);
    assertThat(rev).isEqualTo(3);
    assertThat(seen).extracting(e -> e.type() + " " + e.resource().key().name() + "@" + e.revision())
        .containsExactlyInAnyOrder("MODIFIED b@3", "ADDED c@3", "DELETED a@3");
    assertThat(store.list(TAG).items()).extracting(r -> r.key().name()).containsExactly("b", "c");
    assertThatThrownBy(() -> store.replaceKind(SVC, List.of(tag("x", "1", 1)), 0))
        .hasMessageContaining("is not of kind v1/Service");
  }

  @Test
  void watcherThatFallsBehindIsToldToResync() {
    ResourceStore small = new ResourceStore(100, 2);
    List<Runnable> parked = new ArrayList<>();
    List<StoreEvent> seen = new ArrayList<>();
    List<Long> resyncs = new ArrayList<>();
    small.watch(Set.of(), parked::add, listener(seen, resyncs));
    for (int i = 0; i < 5; i++) {
      small.put(tag("t" + i, "1", 1), 0);
    }
    // queue of 2: events 1 and 2 fit, 3 overflows (queue dropped, resync at 3), then 4 and 5 fit
    parked.forEach(Runnable::run);
    assertThat(resyncs).containsExactly(3L);
    assertThat(seen).extracting(StoreEvent::revision).containsExactly(4L, 5L);
  }

  @Test
  void resumeFromAPastRevisionReplaysOrResyncs() {
    ResourceStore s = new ResourceStore(3, 100);
    for (int i = 1; i <= 5; i++) {
      s.put(tag("t" + i, "1", 1), 0);
    }
    List<StoreEvent> seen = new ArrayList<>();
    List<Long> resyncs = new ArrayList<>();
    s.watchFrom(Set.of(), 3, DIRECT, listener(seen, resyncs));
    assertThat(seen).extracting(StoreEvent::revision).containsExactly(4L, 5L);
    assertThat(resyncs).isEmpty();

    List<StoreEvent> seen2 = new ArrayList<>();
    List<Long> resyncs2 = new ArrayList<>();
    s.watchFrom(Set.of(), 1, DIRECT, listener(seen2, resyncs2));
    assertThat(resyncs2).containsExactly(5L);
    assertThat(seen2).isEmpty();
  }

  @Test
  void aThrowingListenerDoesNotStopDelivery() {
    List<String> names = new ArrayList<>();
    store.watch(Set.of(), DIRECT, new StoreListener() {
      @Override
      public void onEvent(StoreEvent event) {
        names.add(event.resource().key().name());
        throw new IllegalStateException("boom");
      }

      @Override
      public void onResync(long revision) {}
    });
    store.put(tag("a", "1", 1), 0);
    store.put(tag("b", "1", 1), 0);
    assertThat(names).containsExactly("a", "b");
  }

  @Test
  void malformedObjectsAreRejectedNamingTheField() {
    assertThatThrownBy(() -> SourceObject.of(json("{\"kind\":\"TagRoute\"}"), "1"))
        .hasMessageContaining("apiVersion");
    assertThatThrownBy(() -> SourceObject.of(json("{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{}}"), "1"))
        .hasMessageContaining("metadata.name");
  }

  @Test
  void thousandWatchesOpenedAndClosedLeaveNone() {
    for (int i = 0; i < 1000; i++) {
      store.watch(Set.of(TAG), DIRECT, listener(new ArrayList<>(), new ArrayList<>())).close();
    }
    assertThat(store.watchCount()).isZero();
  }

  private static StoreListener listener(List<StoreEvent> events, List<Long> resyncs) {
    return new StoreListener() {
      @Override
      public void onEvent(StoreEvent event) {
        events.add(event);
      }

      @Override
      public void onResync(long revision) {
        resyncs.add(revision);
      }
    };
  }
}
