package dev.portage.hub;

import com.google.protobuf.ByteString;
import com.google.protobuf.Message;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.portage.hub.codec.pb.CoordinationV1;
import io.kubernetes.client.proto.Meta;
import io.kubernetes.client.proto.Runtime;
import io.kubernetes.client.proto.V1;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import java.util.zip.GZIPOutputStream;

/**
 * A stand-in Kubernetes API server for tests that answers the way kube-apiserver does for a
 * protobuf client, built on the same generated classes the hub uses: single objects and lists as
 * {@code application/vnd.kubernetes.protobuf} bodies ({@code k8s\0} + {@code runtime.Unknown},
 * lists as {@code XxxList} messages whose items carry no kind), watches as chunked {@code
 * ;stream=watch} streams of 4-byte length-prefixed {@code WatchEvent} frames, errors as protobuf
 * {@code Status}. An object registered with a JSON form (a fixture written as the API server writes
 * JSON) is answered in JSON to a client that asks for JSON only. A real HTTP server on a port of
 * its own (the JDK's), so the hub talks to it over sockets; it records the requests it saw.
 */
final class KubeApiStandIn implements AutoCloseable {

  static final String PROTOBUF = "application/vnd.kubernetes.protobuf";
  private static final byte[] MAGIC = {0x6b, 0x38, 0x73, 0x00};

  /** One kind of resource the stand-in serves. */
  record Resource(String group, String version, String plural, String kind, boolean namespaced,
      Message prototype) {
    String apiVersion() {
      return group.isEmpty() ? version : group + "/" + version;
    }
  }

  static final Resource PODS = new Resource("", "v1", "pods", "Pod", true, V1.Pod.getDefaultInstance());
  static final Resource NODES = new Resource("", "v1", "nodes", "Node", false, V1.Node.getDefaultInstance());
  static final Resource CONFIGMAPS =
      new Resource("", "v1", "configmaps", "ConfigMap", true, V1.ConfigMap.getDefaultInstance());
  static final Resource SERVICES =
      new Resource("", "v1", "services", "Service", true, V1.Service.getDefaultInstance());
  static final Resource EVENTS = new Resource("", "v1", "events", "Event", true, V1.Event.getDefaultInstance());
  static final Resource LEASES = new Resource("coordination.k8s.io", "v1", "leases", "Lease", true,
      CoordinationV1.Lease.getDefaultInstance());
  private static final List<Resource> RESOURCES =
      List.of(PODS, NODES, CONFIGMAPS, SERVICES, EVENTS, LEASES);

  /** A stored object: its message, and the JSON the API server would write for it, if given. */
  private record Stored(Message object, String json) {}

  /** One request as the stand-in received it. */
  record Seen(String method, String uri, Map<String, String> headers, byte[] body) {}

  private final HttpServer server;
  // Bounded: the tests hold a few connections and watches at a time.
  private final ExecutorService executor = Executors.newFixedThreadPool(16, r -> {
    Thread t = new Thread(r, "kube-api-stand-in");
    t.setDaemon(true);
    return t;
  });
  private final Map<Resource, Map<String, Stored>> objects = new ConcurrentHashMap<>();
  private final List<BlockingQueue<byte[]>> watches = new CopyOnWriteArrayList<>();
  private final List<Seen> seen = new CopyOnWriteArrayList<>();
  private final AtomicLong resourceVersion = new AtomicLong(1000);
  private static final java.util.concurrent.atomic.AtomicInteger GZIPPED =
      new java.util.concurrent.atomic.AtomicInteger();

  private KubeApiStandIn(HttpServer server) {
    this.server = server;
    server.setExecutor(executor);
    server.createContext("/", this::handle);
    server.start();
  }

  /** Starts on {@code port} of the loopback address (0 for a free one). */
  static KubeApiStandIn start(int port) throws IOException {
    return new KubeApiStandIn(
        HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 0));
  }

  int port() {
    return server.getAddress().getPort();
  }

  String url() {
    return "http://127.0.0.1:" + port();
  }

  List<Seen> seen() {
    return List.copyOf(seen);
  }

  /** Stores {@code object} (its metadata names it; a resourceVersion is assigned if it has none). */
  <T extends Message> T put(Resource r, T object) {
    return put(r, object, null);
  }

  /** Stores {@code object} with the JSON the API server writes for it (answered to JSON clients). */
  @SuppressWarnings("unchecked")
  <T extends Message> T put(Resource r, T object, String json) {
    Meta.ObjectMeta meta = metadata(object);
    T stored = object;
    if (meta.getResourceVersion().isEmpty()) {
      Message.Builder b = object.toBuilder();
      b.setField(b.getDescriptorForType().findFieldByNumber(1),
          meta.toBuilder().setResourceVersion(Long.toString(resourceVersion.incrementAndGet())).build());
      stored = (T) b.build();
    }
    objects.computeIfAbsent(r, k -> new ConcurrentHashMap<>())
        .put(key(metadata(stored).getNamespace(), metadata(stored).getName()),
            new Stored(stored, json));
    return stored;
  }

  /** Sends a watch event to every open watch of {@code r} (they are per resource). */
  void event(Resource r, String type, Message object) {
    byte[] frame = frame(Meta.WatchEvent.newBuilder().setType(type)
        .setObject(Runtime.RawExtension.newBuilder()
            .setRaw(ByteString.copyFrom(envelope(r.apiVersion(), r.kind(), object))))
        .build());
    for (BlockingQueue<byte[]> w : watches) {
      w.add(frame);
    }
  }

  /** Ends every open watch (the API server closes the chunked body). */
  void endWatches() {
    for (BlockingQueue<byte[]> w : watches) {
      w.add(new byte[0]);
    }
  }

  /** Answers gzipped so far (by every stand-in of this JVM). */
  static int gzipped() {
    return GZIPPED.get();
  }

  int openWatches() {
    return watches.size();
  }

  static Meta.ObjectMeta metadata(Message object) {
    return (Meta.ObjectMeta) object.getField(object.getDescriptorForType().findFieldByNumber(1));
  }

  /** {@code k8s\0} + Unknown{typeMeta, raw}, with the empty fields 3 and 4 Go writes. */
  static byte[] envelope(String apiVersion, String kind, Message object) {
    Runtime.Unknown u = Runtime.Unknown.newBuilder()
        .setTypeMeta(Runtime.TypeMeta.newBuilder().setApiVersion(apiVersion).setKind(kind))
        .setRaw(object.toByteString()).setContentEncoding("").setContentType("").build();
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.writeBytes(MAGIC);
    out.writeBytes(u.toByteArray());
    return out.toByteArray();
  }

  private static byte[] frame(Message event) {
    byte[] body = event.toByteArray();
    byte[] out = new byte[4 + body.length];
    out[0] = (byte) (body.length >>> 24);
    out[1] = (byte) (body.length >>> 16);
    out[2] = (byte) (body.length >>> 8);
    out[3] = (byte) body.length;
    System.arraycopy(body, 0, out, 4, body.length);
    return out;
  }

  private static String key(String namespace, String name) {
    return namespace + "/" + name;
  }

  // ------------------------------------------------------------------ request handling

  private void handle(HttpExchange ex) throws IOException {
    try (ex) {
      byte[] body = ex.getRequestBody().readAllBytes();
      Map<String, String> headers = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
      ex.getRequestHeaders().forEach((k, v) -> headers.put(k, String.join(",", v)));
      String uri = ex.getRequestURI().toString();
      seen.add(new Seen(ex.getRequestMethod(), uri, headers, body));
      String path = ex.getRequestURI().getPath();
      if (path.equals("/readyz") || path.equals("/healthz")) {
        send(ex, 200, "text/plain", "ok".getBytes(StandardCharsets.UTF_8));
        return;
      }
      Map<String, String> query = query(ex.getRequestURI().getRawQuery());
      Target t = Target.parse(path);
      if (t == null) {
        status(ex, headers, 404, "NotFound", "the server could not find the requested resource");
        return;
      }
      boolean proto = headers.getOrDefault("Accept", "").contains(PROTOBUF);
      switch (ex.getRequestMethod()) {
        case "GET" -> {
          if (!t.name.isEmpty()) {
            get(ex, headers, t, proto);
          } else if ("true".equals(query.get("watch"))) {
            watch(ex, t, query);
          } else {
            list(ex, headers, t, query, proto);
          }
        }
        case "PUT", "POST" -> write(ex, headers, t, body, ex.getRequestMethod().equals("POST"));
        case "PATCH" -> get(ex, headers, t, proto); // patches are answered, not applied
        default -> status(ex, headers, 405, "MethodNotAllowed", "method not allowed");
      }
    } catch (RuntimeException e) {
      e.printStackTrace();
      throw e;
    }
  }

  private void get(HttpExchange ex, Map<String, String> headers, Target t, boolean proto)
      throws IOException {
    Stored s = objects.getOrDefault(t.resource, Map.of()).get(key(t.namespace, t.name));
    if (s == null) {
      status(ex, headers, 404, "NotFound",
          t.resource.plural + " \"" + t.name + "\" not found");
      return;
    }
    if (!proto && s.json != null) {
      send(ex, 200, "application/json", s.json.getBytes(StandardCharsets.UTF_8));
      return;
    }
    send(ex, 200, PROTOBUF, envelope(t.resource.apiVersion(), t.resource.kind(), s.object));
  }

  private void list(HttpExchange ex, Map<String, String> headers, Target t,
      Map<String, String> query, boolean proto) throws IOException {
    Predicate<Message> selected = selector(query.getOrDefault("fieldSelector", ""));
    List<Stored> items = new ArrayList<>();
    new TreeMap<>(objects.getOrDefault(t.resource, Map.of())).forEach((k, s) -> {
      if ((t.namespace.isEmpty() || metadata(s.object).getNamespace().equals(t.namespace))
          && selected.test(s.object)) {
        items.add(s);
      }
    });
    String rv = Long.toString(resourceVersion.get());
    String listKind = t.resource.kind() + "List";
    if (!proto && items.stream().allMatch(s -> s.json != null)) {
      StringBuilder json = new StringBuilder("{\"kind\":\"" + listKind + "\",\"apiVersion\":\""
          + t.resource.apiVersion() + "\",\"metadata\":{\"resourceVersion\":\"" + rv
          + "\"},\"items\":[");
      for (int i = 0; i < items.size(); i++) {
        json.append(i == 0 ? "" : ",").append(items.get(i).json);
      }
      send(ex, 200, "application/json", json.append("]}").toString().getBytes(StandardCharsets.UTF_8));
      return;
    }
    Message.Builder list = listPrototype(t.resource).newBuilderForType();
    var d = list.getDescriptorForType();
    list.setField(d.findFieldByNumber(1), Meta.ListMeta.newBuilder().setResourceVersion(rv).build());
    for (Stored s : items) {
      list.addRepeatedField(d.findFieldByNumber(2), s.object);
    }
    send(ex, 200, PROTOBUF, envelope(t.resource.apiVersion(), listKind, list.build()));
  }

  private static Message listPrototype(Resource r) {
    try {
      Class<?> c = Class.forName(r.prototype.getClass().getName() + "List");
      return (Message) c.getMethod("getDefaultInstance").invoke(null);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The field selectors a kubelet sends: {@code spec.nodeName=}, {@code metadata.name=}. */
  private static Predicate<Message> selector(String fieldSelector) {
    Predicate<Message> p = m -> true;
    for (String term : fieldSelector.split(",")) {
      if (term.isBlank()) {
        continue;
      }
      String[] kv = term.split("=", 2);
      String value = kv[1];
      switch (kv[0]) {
        case "metadata.name" -> p = p.and(m -> metadata(m).getName().equals(value));
        case "metadata.namespace" -> p = p.and(m -> metadata(m).getNamespace().equals(value));
        case "spec.nodeName" -> p = p.and(m -> m instanceof V1.Pod pod
            && pod.getSpec().getNodeName().equals(value));
        default -> throw new IllegalArgumentException("stand-in: field selector " + kv[0]);
      }
    }
    return p;
  }

  private void watch(HttpExchange ex, Target t, Map<String, String> query) throws IOException {
    BlockingQueue<byte[]> events = new LinkedBlockingQueue<>();
    watches.add(events);
    try {
      ex.getResponseHeaders().set("Content-Type", PROTOBUF + ";stream=watch");
      ex.sendResponseHeaders(200, 0); // chunked
      OutputStream out = ex.getResponseBody();
      out.flush();
      long timeout = Long.parseLong(query.getOrDefault("timeoutSeconds", "30"));
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeout);
      while (true) {
        byte[] frame = events.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        if (frame == null || frame.length == 0) {
          break;
        }
        out.write(frame);
        out.flush();
      }
      out.close();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (IOException e) {
      // the client went away
    } finally {
      watches.remove(events);
    }
  }

  private void write(HttpExchange ex, Map<String, String> headers, Target t, byte[] body,
      boolean create) throws IOException {
    if (!headers.getOrDefault("Content-Type", "").startsWith(PROTOBUF)) {
      status(ex, headers, 415, "UnsupportedMediaType", "stand-in reads protobuf bodies only");
      return;
    }
    Runtime.Unknown u = Runtime.Unknown.parseFrom(ByteString.copyFrom(body, 4, body.length - 4));
    Message object = t.resource.prototype.getParserForType().parseFrom(u.getRaw());
    Message.Builder b = object.toBuilder();
    Meta.ObjectMeta meta = metadata(object).toBuilder()
        .setResourceVersion(Long.toString(resourceVersion.incrementAndGet())).build();
    b.setField(b.getDescriptorForType().findFieldByNumber(1), meta);
    Message stored = put(t.resource, b.build());
    send(ex, create ? 201 : 200, PROTOBUF,
        envelope(t.resource.apiVersion(), t.resource.kind(), stored));
  }

  private static void status(HttpExchange ex, Map<String, String> headers, int code, String reason,
      String message) throws IOException {
    Meta.Status status = Meta.Status.newBuilder().setMetadata(Meta.ListMeta.getDefaultInstance())
        .setStatus("Failure").setMessage(message).setReason(reason).setCode(code).build();
    if (headers.getOrDefault("Accept", "").contains(PROTOBUF)) {
      send(ex, code, PROTOBUF, envelope("v1", "Status", status));
    } else {
      send(ex, code, "application/json", ("{\"kind\":\"Status\",\"apiVersion\":\"v1\","
          + "\"metadata\":{},\"status\":\"Failure\",\"message\":\"" + message + "\",\"reason\":\""
          + reason + "\",\"code\":" + code + "}").getBytes(StandardCharsets.UTF_8));
    }
  }

  /** kube-apiserver compresses answers larger than this for clients that accept gzip. */
  static final int GZIP_THRESHOLD = 128 * 1024;

  private static void send(HttpExchange ex, int code, String type, byte[] body) throws IOException {
    ex.getResponseHeaders().set("Content-Type", type);
    String acceptEncoding = ex.getRequestHeaders().getFirst("Accept-Encoding");
    if (body.length > GZIP_THRESHOLD && acceptEncoding != null && acceptEncoding.contains("gzip")) {
      ByteArrayOutputStream zipped = new ByteArrayOutputStream();
      try (GZIPOutputStream gz = new GZIPOutputStream(zipped)) {
        gz.write(body);
      }
      body = zipped.toByteArray();
      ex.getResponseHeaders().set("Content-Encoding", "gzip");
      GZIPPED.incrementAndGet();
    }
    ex.sendResponseHeaders(code, body.length == 0 ? -1 : body.length);
    if (body.length > 0) {
      ex.getResponseBody().write(body);
    }
  }

  private static Map<String, String> query(String raw) {
    Map<String, String> out = new HashMap<>();
    if (raw == null) {
      return out;
    }
    for (String p : raw.split("&")) {
      int eq = p.indexOf('=');
      if (eq > 0) {
        out.put(URLDecoder.decode(p.substring(0, eq), StandardCharsets.UTF_8),
            URLDecoder.decode(p.substring(eq + 1), StandardCharsets.UTF_8));
      }
    }
    return out;
  }

  /** A REST path: resource, namespace ("" for all or cluster-scoped), name ("" for collections). */
  private record Target(Resource resource, String namespace, String name, String subresource) {
    static Target parse(String path) {
      String[] p = path.split("/");
      int i;
      String group;
      String version;
      if (p.length > 2 && p[1].equals("api")) {
        group = "";
        version = p[2];
        i = 3;
      } else if (p.length > 3 && p[1].equals("apis")) {
        group = p[2];
        version = p[3];
        i = 4;
      } else {
        return null;
      }
      String namespace = "";
      if (p.length > i + 2 && p[i].equals("namespaces")) {
        namespace = p[i + 1];
        i += 2;
      }
      if (p.length <= i) {
        return null;
      }
      for (Resource r : RESOURCES) {
        if (r.group.equals(group) && r.version.equals(version) && r.plural.equals(p[i])) {
          return new Target(r, namespace, p.length > i + 1 ? p[i + 1] : "",
              p.length > i + 2 ? p[i + 2] : "");
        }
      }
      return null;
    }
  }

  @Override
  public void close() {
    endWatches();
    server.stop(0);
    executor.shutdownNow();
  }
}
