package dev.portage.hub.cache;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.protobuf.ByteString;
import com.google.protobuf.DiscardUnknownFieldsParser;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Parser;
import dev.portage.hub.codec.CodecException;
import dev.portage.hub.codec.Encoding;
import dev.portage.hub.codec.ProtoEnvelope;
import dev.portage.hub.codec.pb.HubViews;
import dev.portage.hub.proxy.RequestInfo;
import io.kubernetes.client.proto.Meta;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns API server responses into cache writes: one object (get, create, update, patch), a list
 * split object by object with the list's kind and resourceVersion, or one watch event (ADDED and
 * MODIFIED write, DELETED removes). JSON and Kubernetes protobuf answers alike: each object is
 * stored in the encoding it arrived in (a protobuf list item as a complete protobuf body of its
 * own kind), and converted when a client later asks for the other. Responses that are not objects
 * of the expected shape (a {@code Status}, a {@code Table}) are skipped, and so are objects outside
 * the {@link CacheScope}. Thread-safe; does blocking file I/O, so callers run it off the event loop.
 */
public final class ResponseCacher {

  private static final Logger log = LoggerFactory.getLogger(ResponseCacher.class);

  /** Complete lists remembered as applied (scope and resourceVersion); cleared when full. */
  private static final int MAX_APPLIED_LISTS = 4096;

  /** Reads only an object's metadata; the rest of the message is skipped, not kept. */
  private static final Parser<HubViews.ObjectView> OBJECT_VIEW =
      DiscardUnknownFieldsParser.wrap(HubViews.ObjectView.parser());

  private final DiskCache cache;
  private final ObjectMapper json;
  private final CacheScope scope;
  private final Map<String, Integer> appliedLists = new ConcurrentHashMap<>();

  public ResponseCacher(DiskCache cache, ObjectMapper json) {
    this(cache, json, CacheScope.UNSCOPED);
  }

  public ResponseCacher(DiskCache cache, ObjectMapper json, CacheScope scope) {
    this.cache = Objects.requireNonNull(cache, "cache");
    this.json = Objects.requireNonNull(json, "json");
    this.scope = Objects.requireNonNull(scope, "scope");
  }

  public DiskCache cache() {
    return cache;
  }

  /** Which objects are cached for which component. */
  public CacheScope scope() {
    return scope;
  }

  /** Caches the JSON object in a get/create/update/patch response; returns whether it was stored. */
  public boolean cacheObject(RequestInfo info, byte[] body) {
    return cacheObject(info, body, Encoding.JSON);
  }

  /**
   * Caches the object in a get/create/update/patch response body in {@code encoding}; returns
   * whether it was stored.
   */
  public boolean cacheObject(RequestInfo info, byte[] body, Encoding encoding) {
    if (encoding == Encoding.PROTOBUF) {
      ProtoObject obj = protoObject(info, body);
      return obj != null && store(info, obj.namespace, obj.name, obj.rv, Encoding.PROTOBUF,
          () -> body) == DiskCache.WriteResult.WRITTEN;
    }
    JsonNode node = parse(info, body);
    if (node == null || !isObject(node)) {
      return false;
    }
    return store(info, node, body) == DiskCache.WriteResult.WRITTEN;
  }

  /** Caches every item of a JSON list response; see {@link #cacheList(RequestInfo, byte[], Encoding)}. */
  public int cacheList(RequestInfo info, byte[] body) {
    return cacheList(info, body, Encoding.JSON);
  }

  /**
   * Caches every item of a list response, and, when the list is complete (no selector, not a page),
   * removes cached objects of its scope that it no longer contains. The body is not decoded into
   * objects: a JSON list is scanned for each item's byte span (stored with the list's kind and
   * apiVersion put in front when it names none); a protobuf list is read as its items' bytes, each
   * stored wrapped in an envelope of the item kind. Only items whose resourceVersion differs from
   * the cached one are written. A complete list at the very resourceVersion last applied for the
   * same scope is the same snapshot: it is not applied again.
   *
   * @return the number of items stored or already cached, or -1 if the body is not a list
   */
  public int cacheList(RequestInfo info, byte[] body, Encoding encoding) {
    ParsedList list = encoding == Encoding.PROTOBUF ? protoList(info, body) : jsonList(info, body);
    if (list == null) {
      return -1;
    }
    String listRv = safeRv(list.resourceVersion);
    boolean complete =
        info.parameter("labelSelector").isEmpty()
            && info.parameter("fieldSelector").isEmpty()
            && info.parameter("continue").isEmpty()
            && list.continueToken.isEmpty();
    ResourceRef ref = ref(info);
    String scopeKey = ref + " " + info.namespace();
    if (complete && !listRv.isEmpty()) {
      Integer applied = appliedLists.get(scopeKey + " " + listRv);
      if (applied != null) {
        return applied;
      }
    }
    long failuresBefore = cache.writeFailures();
    int stored = 0;
    Set<String> names = new HashSet<>();
    for (Item item : list.items) {
      String namespace = item.namespace.isEmpty() ? info.namespace() : item.namespace;
      names.add(item.namespace + "/" + item.name);
      DiskCache.WriteResult r =
          store(info, namespace, item.name, safeRv(item.rv), encoding, item.bytes);
      if (r == DiskCache.WriteResult.WRITTEN || r == DiskCache.WriteResult.UNCHANGED) {
        stored++;
      }
    }
    DiskCache.ListMeta meta = new DiskCache.ListMeta(list.kind, list.apiVersion, listRv);
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
        appliedLists.put(scopeKey + " " + listRv, stored);
      }
    }
    return stored;
  }

  /** A list read from a body: its kind ({@code PodList}), apiVersion, and items. */
  private record ParsedList(String kind, String apiVersion, String resourceVersion,
      String continueToken, List<Item> items) {}

  /** One list item: the fields the cache needs, and its bytes as they will be stored. */
  private record Item(String name, String namespace, String rv, Supplier<byte[]> bytes) {}

  private ParsedList jsonList(RequestInfo info, byte[] body) {
    ListScan list;
    try {
      list = ListScan.of(json.getFactory(), body);
    } catch (IOException e) {
      log.debug("not caching {}: body is not a JSON object ({})", info, e.getMessage());
      return null;
    }
    String listKind = list.kind();
    if (!listKind.endsWith("List") || list.items() == null) {
      log.debug("not caching {}: kind {} is not a list", info, listKind);
      return null;
    }
    String kind = listKind.substring(0, listKind.length() - "List".length());
    String apiVersion = list.apiVersion().isEmpty() ? info.groupVersion() : list.apiVersion();
    // Items of a list carry no kind/apiVersion; a later get from the cache needs them.
    byte[] prefix = itemPrefix(kind, apiVersion);
    List<Item> items = new ArrayList<>(list.items().size());
    for (ListScan.Item item : list.items()) {
      String itemKind = item.hasKind() ? item.kind() : kind;
      if (item.name().isEmpty() || itemKind.isEmpty() || itemKind.equals("Status")
          || itemKind.equals("Table")) {
        continue;
      }
      items.add(new Item(item.name(), item.namespace(), item.resourceVersion(),
          () -> itemBytes(body, item, prefix)));
    }
    return new ParsedList(listKind, apiVersion, list.resourceVersion(), list.continueToken(), items);
  }

  private ParsedList protoList(RequestInfo info, byte[] body) {
    ProtoEnvelope.Decoded env;
    HubViews.ListView list;
    try {
      env = ProtoEnvelope.decode(body);
      list = HubViews.ListView.parseFrom(env.raw());
    } catch (CodecException | InvalidProtocolBufferException e) {
      log.debug("not caching {}: not a protobuf list ({})", info, e.getMessage());
      return null;
    }
    if (!env.kind().endsWith("List") || env.kind().equals("List")) {
      log.debug("not caching {}: kind {} is not a typed list", info, env.kind());
      return null;
    }
    String kind = env.kind().substring(0, env.kind().length() - "List".length());
    String apiVersion = env.apiVersion().isEmpty() ? info.groupVersion() : env.apiVersion();
    List<Item> items = new ArrayList<>(list.getItemsCount());
    for (ByteString raw : list.getItemsList()) {
      Meta.ObjectMeta meta;
      try {
        meta = OBJECT_VIEW.parseFrom(raw).getMetadata();
      } catch (InvalidProtocolBufferException e) {
        log.debug("{}: skipping a malformed list item ({})", info, e.getMessage());
        continue;
      }
      if (meta.getName().isEmpty()) {
        continue;
      }
      items.add(new Item(meta.getName(), meta.getNamespace(), meta.getResourceVersion(),
          () -> ProtoEnvelope.encode(apiVersion, kind, raw)));
    }
    Meta.ListMeta lm = list.getMetadata();
    return new ParsedList(env.kind(), apiVersion, lm.getResourceVersion(), lm.getContinue(), items);
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
   * Applies one JSON watch event object ({@code {"type": ..., "object": {...}}}); returns whether
   * the cache changed.
   */
  public boolean applyWatchEvent(RequestInfo info, byte[] event) {
    return applyWatchEvent(info, event, Encoding.JSON);
  }

  /**
   * Applies one watch event: a JSON event object, or the body of one protobuf frame (a {@code
   * WatchEvent} whose object is a complete protobuf body). Returns whether the cache changed.
   */
  public boolean applyWatchEvent(RequestInfo info, byte[] event, Encoding encoding) {
    if (encoding == Encoding.PROTOBUF) {
      return applyProtoWatchEvent(info, event);
    }
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
        return delete(info, obj.path("metadata").path("namespace").asText(info.namespace()),
            name(obj));
      }
      default -> {
        return false;
      }
    }
  }

  private boolean applyProtoWatchEvent(RequestInfo info, byte[] frame) {
    Meta.WatchEvent event;
    try {
      event = Meta.WatchEvent.parseFrom(frame);
    } catch (InvalidProtocolBufferException e) {
      log.debug("{}: skipping a malformed watch frame ({})", info, e.getMessage());
      return false;
    }
    byte[] body = event.getObject().getRaw().toByteArray();
    ProtoObject obj = protoObject(info, body);
    if (obj == null) {
      return false; // an ERROR event's Status, or a BOOKMARK's name-less object
    }
    return switch (event.getType()) {
      case "ADDED", "MODIFIED" -> store(info, obj.namespace, obj.name, obj.rv, Encoding.PROTOBUF,
          () -> body) == DiskCache.WriteResult.WRITTEN;
      case "DELETED" -> delete(info, obj.namespace, obj.name);
      default -> false;
    };
  }

  /** The name, namespace and resourceVersion of a protobuf object body; null if it is not one. */
  private record ProtoObject(String namespace, String name, String rv) {}

  private ProtoObject protoObject(RequestInfo info, byte[] body) {
    try {
      ProtoEnvelope.Decoded env = ProtoEnvelope.decode(body);
      String kind = env.kind();
      if (kind.isEmpty() || kind.equals("Status") || kind.equals("Table") || kind.endsWith("List")) {
        return null;
      }
      Meta.ObjectMeta meta = OBJECT_VIEW.parseFrom(env.raw()).getMetadata();
      if (meta.getName().isEmpty()) {
        return null;
      }
      String ns = meta.getNamespace().isEmpty() ? info.namespace() : meta.getNamespace();
      return new ProtoObject(ns, meta.getName(), safeRv(meta.getResourceVersion()));
    } catch (CodecException | InvalidProtocolBufferException e) {
      log.debug("not caching {}: not a protobuf object ({})", info, e.getMessage());
      return null;
    }
  }

  /** The cache key of {@code obj} as read by {@code info}'s component. */
  public static CacheKey key(RequestInfo info, JsonNode obj) {
    return ref(info).key(obj.path("metadata").path("namespace").asText(info.namespace()), name(obj));
  }

  /** {@code info}'s resource as cached for its component. */
  public static ResourceRef ref(RequestInfo info) {
    return new ResourceRef(info.component(), info.resource(), info.apiVersion(), info.apiGroup());
  }

  private DiskCache.WriteResult store(RequestInfo info, JsonNode obj, byte[] bytes) {
    String rv = safeRv(obj.path("metadata").path("resourceVersion").asText(""));
    return store(info, obj.path("metadata").path("namespace").asText(info.namespace()), name(obj),
        rv, Encoding.JSON, () -> bytes);
  }

  private DiskCache.WriteResult store(RequestInfo info, String namespace, String name, String rv,
      Encoding encoding, Supplier<byte[]> bytes) {
    if (!scope.admits(info, namespace, name)) {
      log.debug("not caching {} {}/{}: outside the node's scope", info, namespace, name);
      return DiskCache.WriteResult.UNCHANGED;
    }
    return cache.put(ref(info).key(namespace, name), rv, encoding, bytes);
  }

  private boolean delete(RequestInfo info, String namespace, String name) {
    return !name.isEmpty() && cache.delete(ref(info).key(namespace, name));
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
