package dev.portage.control.store;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The control plane's in-memory, revisioned store of typed objects: the one place the rule server and
 * the destination server read, fed by one source (files or Kubernetes).
 *
 * <p>Every change gets a store revision that only grows. A source may pass a revision hint (a
 * Kubernetes resourceVersion, a file time stamp); the new revision is {@code max(current + 1, hint)},
 * so revisions derived from the source survive a control-plane restart. An update whose object is
 * equal to the stored one (ignoring bookkeeping metadata such as resourceVersion) changes nothing and
 * emits no event.
 *
 * <p>Watchers get events in revision order through their own bounded queue on their own executor; a
 * watcher that falls behind gets {@link StoreListener#onResync} instead of silently missing events.
 * The store keeps a bounded history so a watcher may resume from a past revision.
 *
 * <p>Thread-safe. Listeners are never called while the store's lock is held.
 */
public final class ResourceStore {

  private static final Logger log = LoggerFactory.getLogger(ResourceStore.class);

  /** Default bound of a watcher's queue and of the replay history. */
  public static final int DEFAULT_WATCH_QUEUE = 4096;

  public static final int DEFAULT_HISTORY = 16384;

  private final Object lock = new Object();
  private final Map<String, TreeMap<ResourceKey, Resource>> byKind = new HashMap<>();
  private final Map<String, Long> kindRevisions = new HashMap<>();
  private final ArrayDeque<StoreEvent> history = new ArrayDeque<>();
  private final int historyLimit;
  private final int watchQueueLimit;
  private final List<WatcherQueue> watchers = new CopyOnWriteArrayList<>();
  private long revision;
  private long droppedHistoryUpTo;

  public ResourceStore() {
    this(DEFAULT_HISTORY, DEFAULT_WATCH_QUEUE);
  }

  public ResourceStore(int historyLimit, int watchQueueLimit) {
    if (historyLimit < 0) {
      throw new IllegalArgumentException("historyLimit: " + historyLimit + " (expected: >= 0)");
    }
    if (watchQueueLimit < 1) {
      throw new IllegalArgumentException("watchQueueLimit: " + watchQueueLimit + " (expected: > 0)");
    }
    this.historyLimit = historyLimit;
    this.watchQueueLimit = watchQueueLimit;
  }

  /** The revision of the latest change, 0 for an empty store that never changed. */
  public long revision() {
    synchronized (lock) {
      return revision;
    }
  }

  /** The revision of the latest change to any object of {@code kind}, 0 if none. */
  public long kindRevision(String kind) {
    synchronized (lock) {
      return kindRevisions.getOrDefault(kind, 0L);
    }
  }

  /** Every object of one kind, sorted by key, with the kind's revision. */
  public KindSnapshot list(String kind) {
    synchronized (lock) {
      TreeMap<ResourceKey, Resource> m = byKind.get(kind);
      return new KindSnapshot(
          kind, kindRevisions.getOrDefault(kind, 0L), m == null ? List.of() : new ArrayList<>(m.values()));
    }
  }

  /** The kinds that have at least one object. */
  public Set<String> kinds() {
    synchronized (lock) {
      Set<String> s = new HashSet<>();
      byKind.forEach((k, m) -> {
        if (!m.isEmpty()) {
          s.add(k);
        }
      });
      return s;
    }
  }

  public Optional<Resource> get(ResourceKey key) {
    synchronized (lock) {
      TreeMap<ResourceKey, Resource> m = byKind.get(key.kind());
      return Optional.ofNullable(m == null ? null : m.get(key));
    }
  }

  /** Number of objects of all kinds. */
  public int size() {
    synchronized (lock) {
      return byKind.values().stream().mapToInt(Map::size).sum();
    }
  }

  /**
   * Adds or replaces one object.
   *
   * @return the store revision after the call (unchanged if the object was equal)
   */
  public long put(SourceObject object, long revisionHint) {
    List<StoreEvent> events = new ArrayList<>(1);
    long rev;
    synchronized (lock) {
      rev = applyPut(object, revisionHint, events, -1);
      record(events);
    }
    dispatch();
    return rev;
  }

  /** Removes one object; a missing object changes nothing. */
  public long delete(ResourceKey key, long revisionHint) {
    List<StoreEvent> events = new ArrayList<>(1);
    long rev;
    synchronized (lock) {
      rev = applyDelete(key, revisionHint, events, -1);
      record(events);
    }
    dispatch();
    return rev;
  }

  /**
   * Makes the objects of {@code kind} exactly {@code objects} (a source's full re-list), as one change:
   * every resulting event carries the same new revision.
   *
   * @throws IllegalArgumentException if an object is of another kind
   */
  public long replaceKind(String kind, Collection<SourceObject> objects, long revisionHint) {
    for (SourceObject o : objects) {
      if (!o.key().kind().equals(kind)) {
        throw new IllegalArgumentException("object " + o.key() + " is not of kind " + kind);
      }
    }
    List<StoreEvent> events = new ArrayList<>();
    long rev;
    synchronized (lock) {
      long batch = nextRevision(revisionHint);
      Set<ResourceKey> keep = new HashSet<>();
      for (SourceObject o : objects) {
        keep.add(o.key());
        applyPut(o, revisionHint, events, batch);
      }
      TreeMap<ResourceKey, Resource> m = byKind.get(kind);
      if (m != null) {
        for (ResourceKey k : new ArrayList<>(m.keySet())) {
          if (!keep.contains(k)) {
            applyDelete(k, revisionHint, events, batch);
          }
        }
      }
      record(events);
      rev = revision;
    }
    dispatch();
    return rev;
  }

  /** Watches future changes of the given kinds (all kinds when empty). */
  public Watch watch(Set<String> kinds, Executor executor, StoreListener listener) {
    return watchFrom(kinds, -1, executor, listener);
  }

  /**
   * Watches changes after {@code fromRevision}: events still in the history are replayed first; if the
   * history no longer reaches back that far the listener gets {@link StoreListener#onResync} first. A
   * negative {@code fromRevision} means "from now".
   */
  public Watch watchFrom(Set<String> kinds, long fromRevision, Executor executor, StoreListener listener) {
    WatcherQueue w = new WatcherQueue(Set.copyOf(kinds), executor, listener);
    synchronized (lock) {
      if (fromRevision >= 0) {
        if (fromRevision < droppedHistoryUpTo) {
          w.overflow(revision);
        } else {
          for (StoreEvent e : history) {
            if (e.revision() > fromRevision) {
              w.offer(e);
            }
          }
        }
      }
      watchers.add(w);
    }
    w.schedule();
    return () -> {
      w.closed = true;
      watchers.remove(w);
    };
  }

  /** Number of live watches (for metrics and leak tests). */
  public int watchCount() {
    return watchers.size();
  }

  private long nextRevision(long hint) {
    return Math.max(revision + 1, hint);
  }

  /** batch >= 0: use that revision (replaceKind); otherwise a fresh one. Caller holds the lock. */
  private long applyPut(SourceObject o, long hint, List<StoreEvent> out, long batch) {
    TreeMap<ResourceKey, Resource> m = byKind.computeIfAbsent(o.key().kind(), k -> new TreeMap<>());
    Resource old = m.get(o.key());
    if (old != null && sameContent(old.body(), o.body())) {
      if (!old.sourceVersion().equals(o.sourceVersion())) {
        m.put(o.key(), new Resource(o.key(), old.revision(), o.sourceVersion(), old.body()));
      }
      return revision;
    }
    long rev = batch >= 0 ? batch : nextRevision(hint);
    revision = rev;
    Resource r = new Resource(o.key(), rev, o.sourceVersion(), o.body());
    m.put(o.key(), r);
    kindRevisions.put(o.key().kind(), rev);
    out.add(new StoreEvent(old == null ? StoreEvent.Type.ADDED : StoreEvent.Type.MODIFIED, r, rev));
    return rev;
  }

  private long applyDelete(ResourceKey key, long hint, List<StoreEvent> out, long batch) {
    TreeMap<ResourceKey, Resource> m = byKind.get(key.kind());
    Resource old = m == null ? null : m.remove(key);
    if (old == null) {
      return revision;
    }
    long rev = batch >= 0 ? batch : nextRevision(hint);
    revision = rev;
    kindRevisions.put(key.kind(), rev);
    out.add(new StoreEvent(StoreEvent.Type.DELETED, old, rev));
    return rev;
  }

  /** Appends to history and to watcher queues. Caller holds the lock. */
  private void record(List<StoreEvent> events) {
    for (StoreEvent e : events) {
      history.addLast(e);
      while (history.size() > historyLimit) {
        droppedHistoryUpTo = history.removeFirst().revision();
      }
      for (WatcherQueue w : watchers) {
        w.offer(e);
      }
    }
  }

  private void dispatch() {
    for (WatcherQueue w : watchers) {
      w.schedule();
    }
  }

  /** Bookkeeping fields that change without the object changing. */
  private static boolean sameContent(JsonNode a, JsonNode b) {
    return stripped(a).equals(stripped(b));
  }

  private static JsonNode stripped(JsonNode body) {
    if (!(body instanceof ObjectNode obj) || !(obj.get("metadata") instanceof ObjectNode)) {
      return body;
    }
    ObjectNode copy = obj.deepCopy();
    ObjectNode meta = (ObjectNode) copy.get("metadata");
    meta.remove(List.of("resourceVersion", "managedFields", "generation", "creationTimestamp", "uid", "selfLink"));
    return copy;
  }

  /** One watcher's bounded queue, drained on its executor. */
  private final class WatcherQueue {
    private final Set<String> kinds;
    private final Executor executor;
    private final StoreListener listener;
    private final ArrayDeque<StoreEvent> queue = new ArrayDeque<>();
    private long resyncAt = -1;
    private boolean scheduled;
    volatile boolean closed;

    WatcherQueue(Set<String> kinds, Executor executor, StoreListener listener) {
      this.kinds = kinds;
      this.executor = executor;
      this.listener = listener;
    }

    /** Caller holds the store lock. */
    void offer(StoreEvent e) {
      if (!kinds.isEmpty() && !kinds.contains(e.resource().key().kind())) {
        return;
      }
      synchronized (this) {
        if (queue.size() >= watchQueueLimit) {
          overflow(e.revision());
          return;
        }
        queue.addLast(e);
      }
    }

    synchronized void overflow(long atRevision) {
      queue.clear();
      resyncAt = atRevision;
    }

    void schedule() {
      synchronized (this) {
        if (scheduled || closed || (queue.isEmpty() && resyncAt < 0)) {
          return;
        }
        scheduled = true;
      }
      executor.execute(this::drain);
    }

    private void drain() {
      while (!closed) {
        long resync;
        StoreEvent next = null;
        synchronized (this) {
          resync = resyncAt;
          resyncAt = -1;
          if (resync < 0) {
            next = queue.pollFirst();
            if (next == null) {
              scheduled = false;
              return;
            }
          }
        }
        try {
          if (resync >= 0) {
            listener.onResync(resync);
          } else {
            listener.onEvent(next);
          }
        } catch (RuntimeException ex) {
          log.warn("store listener {} failed; continuing", listener, ex);
        }
      }
    }
  }
}
