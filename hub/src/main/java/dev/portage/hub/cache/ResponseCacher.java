package dev.portage.hub.cache;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.portage.hub.proxy.RequestInfo;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns API server responses into cache writes: one object (get, create, update, patch), a list
 * split object by object with the list's kind and resourceVersion, or one watch event (ADDED and
 * MODIFIED write, DELETED removes). Responses that are not JSON objects of the expected shape
 * (a {@code Status}, a {@code Table}, protobuf) are skipped. Thread-safe; does blocking file I/O, so
 * callers run it off the event loop.
 */
public final class ResponseCacher {

  private static final Logger log = LoggerFactory.getLogger(ResponseCacher.class);

  /** Complete lists remembered as applied (scope and resourceVersion); cleared when full. */
  private static final int MAX_APPLIED_LISTS = 4096;

  private final DiskCache cache;
  private final ObjectMapper json;
  private final Map<String, Integer> appliedLists = new ConcurrentHashMap<>();

  public ResponseCacher(DiskCache cache, ObjectMapper json) {
    this.cache = Objects.requireNonNull(cache, "cache");
    this.json = Objects.requireNonNull(json, "json");
  }

  public DiskCache cache() {
    return cache;
  }

  /** Caches the object in a get/create/update/patch response body; returns whether it was stored. */
  public boolean cacheObject(RequestInfo info, byte[] body) {
    JsonNode node = parse(info, body);
    if (node == null || !isObject(node)) {
      return false;
    }
    return store(info, node, body) == DiskCache.WriteResult.WRITTEN;
  }

  /**
   * Caches every item of a list response, and, when the list is complete (no selector, not a page),
   * removes cached objects of its scope that it no longer contains. The body is scanned, not parsed
   * into a tree: each item is stored as its own bytes (with the list's kind and apiVersion put in
   * front when it names none), and only items whose resourceVersion differs from the cached one are
   * written. A complete list at the very resourceVersion last applied for the same scope is the
   * same snapshot: it is not applied again.
   *
   * @return the number of items stored or already cached, or -1 if the body is not a list
   */
  public int cacheList(RequestInfo info, byte[] body) {
    ListScan list;
    try {
      list = ListScan.of(json.getFactory(), body);
    } catch (IOException e) {
      log.debug("not caching {}: body is not a JSON object ({})", info, e.getMessage());
      return -1;
    }
    String listKind = list.kind();
    if (!listKind.endsWith("List") || list.items() == null) {
      log.debug("not caching {}: kind {} is not a list", info, listKind);
      return -1;
    }
    String listRv = safeRv(list.resourceVersion());
    boolean complete =
        info.parameter("labelSelector").isEmpty()
            && info.parameter("fieldSelector").isEmpty()
            && info.parameter("continue").isEmpty()
            && list.continueToken().isEmpty();
    ResourceRef ref = ref(info);
    String scope = ref + " " + info.namespace();
    if (complete && !listRv.isEmpty()) {
      Integer applied = appliedLists.get(scope + " " + listRv);
      if (applied != null) {
        return applied;
      }
    }
    long failuresBefore = cache.writeFailures();
    String kind = listKind.substring(0, listKind.length() - "List".length());
    String apiVersion = list.apiVersion().isEmpty() ? info.groupVersion() : list.apiVersion();
    // Items of a list carry no kind/apiVersion; a later get from the cache needs them.
    byte[] prefix = itemPrefix(kind, apiVersion);
    int stored = 0;
    Set<String> names = new HashSet<>();
    for (ListScan.Item item : list.items()) {
      String itemKind = item.hasKind() ? item.kind() : kind;
      if (item.name().isEmpty() || itemKind.isEmpty() || itemKind.equals("Status")
          || itemKind.equals("Table")) {
        continue;
      }
      names.add(item.namespace() + "/" + item.name());
      CacheKey key = new CacheKey(info.component(), info.resource(), info.apiVersion(),
          info.apiGroup(), item.namespace().isEmpty() ? info.namespace() : item.namespace(),
          item.name());
      DiskCache.WriteResult r = cache.put(key, safeRv(item.resourceVersion()),
          () -> itemBytes(body, item, prefix));
      if (r == DiskCache.WriteResult.WRITTEN || r == DiskCache.WriteResult.UNCHANGED) {
        stored++;
      }
    }
    DiskCache.ListMeta meta = new DiskCache.ListMeta(listKind, apiVersion, listRv);
    if (!cache.listMeta(ref).equals(Optional.of(meta))) {
      cache.putListMeta(ref, meta);
    }
    if (complete) {
      int removed = cache.retainOnly(ref, info.namespace(), names, listRv);
      if (removed > 0) {
        log.debug("{}: removed {} cached objects no longer listed", info, removed);
      }
      if (!listRv.isEmpty() && cache.writeFailures() == failuresBefore) {
        if (appliedLists.size() >= MAX_APPLIED_LISTS) {
          appliedLists.clear();
        }
        appliedLists.put(scope + " " + listRv, stored);
      }
    }
    return stored;
  }

  /** {@code {"kind":"Pod","apiVersion":"v1",} without the closing part: put before an item's fields. */
  private byte[] itemPrefix(String kind, String apiVersion) {
    try {
      return ("{\"kind\":" + json.writeValueAsString(kind) + ",\"apiVersion\":"
          + json.writeValueAsString(apiVersion) + ",").getBytes(StandardCharsets.UTF_8);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot encode a string", e); // never for a String
    }
  }

  /** The item's bytes, with the list's kind and apiVersion added when it names none. */
  private static byte[] itemBytes(byte[] body, ListScan.Item item, byte[] prefix) {
    if (item.hasKind() && item.hasApiVersion()) {
      return Arrays.copyOfRange(body, item.start(), item.end());
    }
    // The item starts with '{' and has fields (it has a name): splice the prefix in after the brace.
    int rest = item.end() - item.start() - 1;
    byte[] out = new byte[prefix.length + rest];
    System.arraycopy(prefix, 0, out, 0, prefix.length);
    System.arraycopy(body, item.start() + 1, out, prefix.length, rest);
    return out;
  }

  /**
   * Applies one watch event object ({@code {"type": ..., "object": {...}}}); returns whether the
   * cache changed.
   */
  public boolean applyWatchEvent(RequestInfo info, byte[] event) {
    JsonNode node = parse(info, event);
    if (node == null) {
      return false;
    }
    String type = node.path("type").asText("");
    JsonNode obj = node.get("object");
    if (obj == null || !isObject(obj)) {
      return false; // BOOKMARK objects have a name-less metadata; ERROR carries a Status
    }
    switch (type) {
      case "ADDED", "MODIFIED" -> {
        try {
          return store(info, obj, json.writeValueAsBytes(obj)) == DiskCache.WriteResult.WRITTEN;
        } catch (JsonProcessingException e) {
          return false;
        }
      }
      case "DELETED" -> {
        return cache.delete(key(info, obj));
      }
      default -> {
        return false;
      }
    }
  }

  /** The cache key of {@code obj} as read by {@code info}'s component. */
  public static CacheKey key(RequestInfo info, JsonNode obj) {
    return new CacheKey(
        info.component(),
        info.resource(),
        info.apiVersion(),
        info.apiGroup(),
        obj.path("metadata").path("namespace").asText(info.namespace()),
        name(obj));
  }

  /** {@code info}'s resource as cached for its component. */
  public static ResourceRef ref(RequestInfo info) {
    return new ResourceRef(info.component(), info.resource(), info.apiVersion(), info.apiGroup());
  }

  private DiskCache.WriteResult store(RequestInfo info, JsonNode obj, byte[] bytes) {
    String rv = safeRv(obj.path("metadata").path("resourceVersion").asText(""));
    return cache.put(key(info, obj), bytes, rv);
  }


  private JsonNode parse(RequestInfo info, byte[] body) {
    try {
      JsonNode node = json.readTree(body);
      return node != null && node.isObject() ? node : null;
    } catch (IOException e) {
      log.debug("not caching {}: body is not JSON ({})", info, e.getMessage());
      return null;
    }
  }

  private static boolean isObject(JsonNode node) {
    String kind = node.path("kind").asText("");
    return !kind.isEmpty() && !kind.equals("Status") && !kind.equals("Table")
        && !name(node).isEmpty();
  }

  private static String name(JsonNode obj) {
    return obj.path("metadata").path("name").asText("");
  }

  private static String safeRv(String rv) {
    for (int i = 0; i < rv.length(); i++) {
      if (rv.charAt(i) <= ' ' || rv.charAt(i) > '~') {
        return "";
      }
    }
    return rv;
  }
}
