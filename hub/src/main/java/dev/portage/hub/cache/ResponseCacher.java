package dev.portage.hub.cache;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.portage.hub.proxy.RequestInfo;
import java.io.IOException;
import java.util.HashSet;
import java.util.Objects;
import java.util.Set;
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

  private final DiskCache cache;
  private final ObjectMapper json;

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
   * removes cached objects of its scope that it no longer contains.
   *
   * @return the number of items stored, or -1 if the body is not a list
   */
  public int cacheList(RequestInfo info, byte[] body) {
    JsonNode node = parse(info, body);
    if (node == null) {
      return -1;
    }
    String listKind = node.path("kind").asText("");
    if (!listKind.endsWith("List") || !node.path("items").isArray()) {
      log.debug("not caching {}: kind {} is not a list", info, listKind);
      return -1;
    }
    String kind = listKind.substring(0, listKind.length() - "List".length());
    String apiVersion = node.path("apiVersion").asText(info.groupVersion());
    String listRv = node.path("metadata").path("resourceVersion").asText("");
    int stored = 0;
    Set<String> names = new HashSet<>();
    for (JsonNode item : node.get("items")) {
      if (!(item instanceof ObjectNode obj)) {
        continue;
      }
      // Items of a list carry no kind/apiVersion; a later get from the cache needs them.
      if (!obj.hasNonNull("kind")) {
        obj.put("kind", kind);
      }
      if (!obj.hasNonNull("apiVersion")) {
        obj.put("apiVersion", apiVersion);
      }
      if (!isObject(obj)) {
        continue;
      }
      names.add(obj.path("metadata").path("namespace").asText("") + "/" + name(obj));
      byte[] bytes;
      try {
        bytes = json.writeValueAsBytes(obj);
      } catch (JsonProcessingException e) {
        continue;
      }
      DiskCache.WriteResult r = store(info, obj, bytes);
      if (r == DiskCache.WriteResult.WRITTEN || r == DiskCache.WriteResult.UNCHANGED) {
        stored++;
      }
    }
    ResourceRef ref = ref(info);
    cache.putListMeta(ref, new DiskCache.ListMeta(listKind, apiVersion, safeRv(listRv)));
    boolean complete =
        info.parameter("labelSelector").isEmpty()
            && info.parameter("fieldSelector").isEmpty()
            && info.parameter("continue").isEmpty()
            && node.path("metadata").path("continue").asText("").isEmpty();
    if (complete) {
      int removed =
          cache.retainOnly(ref, info.namespace(), names, safeRv(listRv));
      if (removed > 0) {
        log.debug("{}: removed {} cached objects no longer listed", info, removed);
      }
    }
    return stored;
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
