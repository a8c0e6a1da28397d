package dev.portage.control.source.kubernetes;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.portage.control.store.ResourceKey;
import dev.portage.control.store.ResourceStore;
import dev.portage.control.store.SourceObject;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applies one informer's events for one kind to the store.
 *
 * <p>Until the informer's first list completes, events only collect the listed objects; {@code
 * onList} then makes the kind exactly that set with one {@link ResourceStore#replaceKind} (stale
 * objects vanish, one revision for the whole list). After that every add, update and delete is a
 * put or delete. Re-lists after a watch expiry arrive as ordinary deltas.
 *
 * <p>Threading: fabric8 calls the handler methods one at a time, in order, on the informer's serial
 * executor; {@code initial} is touched only there. {@link #markUnavailable} may come from any thread.
 */
final class KindFeed implements ResourceEventHandler<GenericKubernetesResource> {

  private static final Logger log = LoggerFactory.getLogger(KindFeed.class);

  private final WatchedKind kind;
  private final ResourceStore store;
  private final KubernetesSerialization serialization;
  private final AtomicBoolean unavailable = new AtomicBoolean();
  private Map<ResourceKey, SourceObject> initial = new LinkedHashMap<>();
  private volatile boolean synced;

  KindFeed(WatchedKind kind, ResourceStore store, KubernetesSerialization serialization) {
    this.kind = kind;
    this.store = store;
    this.serialization = serialization;
  }

  WatchedKind kind() {
    return kind;
  }

  boolean isSynced() {
    return synced;
  }

  boolean isUnavailable() {
    return unavailable.get();
  }

  /** The informer gave up on this kind; logged once. Returns false if it was already marked. */
  boolean markUnavailable(String why, Throwable cause) {
    if (!unavailable.compareAndSet(false, true)) {
      return false;
    }
    log.warn("kubernetes source: {} is not available ({}); the other kinds keep working", kind.storeKind(), why);
    log.debug("kubernetes source: {} failure", kind.storeKind(), cause);
    return true;
  }

  @Override
  public void onAdd(GenericKubernetesResource obj) {
    upsert(obj);
  }

  @Override
  public void onUpdate(GenericKubernetesResource oldObj, GenericKubernetesResource newObj) {
    upsert(newObj);
  }

  @Override
  public void onDelete(GenericKubernetesResource obj, boolean deletedFinalStateUnknown) {
    try {
      SourceObject o = toSourceObject(obj);
      if (initial != null) {
        initial.remove(o.key());
        return;
      }
      // For a watch DELETED event the object carries the resourceVersion of the delete itself.
      store.delete(o.key(), ResourceVersions.hint(o.sourceVersion()));
    } catch (RuntimeException e) {
      log.warn("kubernetes source: cannot apply delete of {} {}", kind.storeKind(), name(obj), e);
    }
  }

  @Override
  public void onList(String resourceVersion, boolean remainedEmpty) {
    if (initial == null) {
      return; // a re-list: its differences already came as add/update/delete
    }
    long hint = ResourceVersions.hint(resourceVersion);
    for (SourceObject o : initial.values()) {
      hint = Math.max(hint, ResourceVersions.hint(o.sourceVersion()));
    }
    int count = initial.size();
    try {
      long rev = store.replaceKind(kind.storeKind(), initial.values(), hint);
      log.info(
          "kubernetes source: synced {} ({} objects, resourceVersion {}, store revision {})",
          kind.storeKind(), count, resourceVersion, rev);
    } finally {
      initial = null;
      synced = true;
    }
  }

  private void upsert(GenericKubernetesResource obj) {
    try {
      SourceObject o = toSourceObject(obj);
      if (initial != null) {
        initial.put(o.key(), o);
        return;
      }
      store.put(o, ResourceVersions.hint(o.sourceVersion()));
    } catch (RuntimeException e) {
      log.warn("kubernetes source: cannot apply {} {}", kind.storeKind(), name(obj), e);
    }
  }

  /**
   * The object as a Kubernetes-shaped tree. List items from the API server may lack apiVersion and
   * kind, so they are filled in from the watched kind; managedFields are dropped (large, and no
   * reader needs them).
   */
  SourceObject toSourceObject(GenericKubernetesResource obj) {
    ObjectNode body = serialization.convertValue(obj, ObjectNode.class);
    body.put("apiVersion", kind.apiVersion());
    body.put("kind", kind.kind());
    JsonNode meta = body.path("metadata");
    if (meta instanceof ObjectNode m) {
      m.remove("managedFields");
    }
    String name = meta.path("name").asText("");
    if (name.isEmpty()) {
      throw new IllegalArgumentException("metadata.name: missing in " + kind.storeKind());
    }
    String rv = meta.path("resourceVersion").asText("");
    return new SourceObject(
        new ResourceKey(kind.storeKind(), meta.path("namespace").asText(""), name), rv, body);
  }

  private static String name(GenericKubernetesResource obj) {
    return obj.getMetadata() == null
        ? "?"
        : obj.getMetadata().getNamespace() + "/" + obj.getMetadata().getName();
  }
}
