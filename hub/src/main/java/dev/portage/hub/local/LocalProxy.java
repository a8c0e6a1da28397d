package dev.portage.hub.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.portage.core.time.TimeSource;
import dev.portage.hub.cache.CachePolicy;
import dev.portage.hub.cache.DiscoveryDocument;
import dev.portage.hub.cache.DiskCache;
import dev.portage.hub.cache.ResourceRef;
import dev.portage.hub.cache.ResponseCacher;
import dev.portage.hub.proxy.HttpResponses;
import dev.portage.hub.proxy.RequestInfo;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BooleanSupplier;
import java.util.random.RandomGenerator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Answers requests while the cloud is unreachable (YurtHub's LocalProxy): get and list from the
 * disk cache of the calling component, with label and field selectors; watch held open with no
 * events until its timeout or until the cloud is healthy again, so the client re-lists; created
 * {@code events} stored and echoed with 201; delete refused with 403; anything else a Kubernetes
 * {@code Status} error.
 *
 * <p>Thread-safe. {@link #serve} may be called on an event loop: disk reads run on the injected
 * I/O executor, watch timers on the injected scheduler.
 */
public final class LocalProxy {

  private static final Logger log = LoggerFactory.getLogger(LocalProxy.class);

  /** How often a held watch checks whether the cloud is back (YurtHub: 2 s). */
  static final Duration HEALTH_CHECK_INTERVAL = Duration.ofSeconds(2);

  /** Why the request came to the local proxy. */
  public enum Reason {
    /** No API server is healthy: non-reads answer 503. */
    NO_HEALTHY_UPSTREAM,
    /** The remote request failed before any byte was answered: non-reads answer 502. */
    UPSTREAM_FAILED
  }

  private final ResponseCacher cacher;
  private final CachePolicy policy;
  private final ObjectMapper json;
  private final TimeSource time;
  private final BooleanSupplier cloudHealthy;
  private final Duration minRequestTimeout;
  private final RandomGenerator random;
  private final Executor io;
  private final Set<HeldWatch> heldWatches = ConcurrentHashMap.newKeySet();
  private final LongAdder servedFromCache = new LongAdder();
  private final ListMemo lists = new ListMemo();

  /**
   * @param cloudHealthy whether any API server is healthy now; read by held watches every 2 s
   * @param minRequestTimeout a held watch without {@code timeoutSeconds} ends after this × U[1,2)
   * @param io runs the blocking disk reads and writes
   */
  public LocalProxy(
      ResponseCacher cacher,
      CachePolicy policy,
      ObjectMapper json,
      TimeSource time,
      BooleanSupplier cloudHealthy,
      Duration minRequestTimeout,
      RandomGenerator random,
      Executor io) {
    this.cacher = Objects.requireNonNull(cacher, "cacher");
    this.policy = Objects.requireNonNull(policy, "policy");
    this.json = Objects.requireNonNull(json, "json");
    this.time = Objects.requireNonNull(time, "time");
    this.cloudHealthy = Objects.requireNonNull(cloudHealthy, "cloudHealthy");
    this.minRequestTimeout = Objects.requireNonNull(minRequestTimeout, "minRequestTimeout");
    if (minRequestTimeout.isNegative() || minRequestTimeout.isZero()) {
      throw new IllegalArgumentException(
          "minRequestTimeout: " + minRequestTimeout + " (expected: > 0)");
    }
    this.random = Objects.requireNonNull(random, "random");
    this.io = Objects.requireNonNull(io, "io");
  }

  /**
   * Answers one request on {@code channel}.
   *
   * @param body the request body (for creates); the caller keeps ownership of its own buffers
   */
  public void serve(RequestInfo info, byte[] body, Channel channel, boolean keepAlive, Reason reason) {
    serve(info, "", body, channel, keepAlive, reason);
  }

  /**
   * Answers one request on {@code channel}; {@code accept} (the request's {@code Accept}, "" for
   * none) picks a negotiated discovery document.
   *
   * @param body the request body (for creates); the caller keeps ownership of its own buffers
   */
  public void serve(RequestInfo info, String accept, byte[] body, Channel channel,
      boolean keepAlive, Reason reason) {
    Objects.requireNonNull(accept, "accept");
    if (info.resourceRequest() && info.isWatch()) {
      holdWatch(info, channel, keepAlive);
      return;
    }
    try {
      io.execute(() -> {
        try {
          HttpResponses.send(channel, answer(info, accept, body, reason), keepAlive);
        } catch (RuntimeException e) {
          log.warn("local proxy failed on {}", info, e);
          HttpResponses.send(
              channel, HttpResponses.status(500, "InternalError", "hub: " + e.getMessage()), false);
        }
      });
    } catch (RejectedExecutionException e) {
      HttpResponses.send(
          channel, HttpResponses.status(503, "ServiceUnavailable", "hub is shutting down"), false);
    }
  }

  /** Requests answered from the cache (get, list, event create) since start. */
  public long servedFromCache() {
    return servedFromCache.sum();
  }

  /** Watches being held open now; for tests and metrics. */
  public int heldWatches() {
    return heldWatches.size();
  }

  /** Ends every held watch (the hub is closing). */
  public void closeAll() {
    for (HeldWatch w : List.copyOf(heldWatches)) {
      w.end("hub closing");
    }
  }

  private io.netty.handler.codec.http.FullHttpResponse answer(
      RequestInfo info, String accept, byte[] body, Reason reason) {
    if (!info.resourceRequest()) {
      if (info.verb().equals("get") && DiscoveryDocument.isDiscoveryPath(info.path())) {
        return discovery(info, accept, reason);
      }
      return unavailable(info, reason);
    }
    switch (info.verb()) {
      case "get":
        if (!info.subresource().isEmpty() && !info.subresource().equals("status")) {
          return unavailable(info, reason);
        }
        return get(info);
      case "list":
        return list(info);
      case "create":
        if (info.resource().equals("events") && info.subresource().isEmpty()) {
          return createEvent(info, body);
        }
        return unavailable(info, reason);
      case "delete":
      case "deletecollection":
        return HttpResponses.status(403, "Forbidden",
            "hub: " + info.verb() + " " + info.resource() + " is refused while the API server is"
                + " unreachable");
      default:
        return unavailable(info, reason);
    }
  }

  private io.netty.handler.codec.http.FullHttpResponse get(RequestInfo info) {
    if (!policy.cachesComponent(info.component())) {
      return notCached(info);
    }
    ResourceRef ref = ResponseCacher.ref(info);
    return cacher.cache().get(ref.key(info.namespace(), info.name()))
        .map(e -> {
          servedFromCache.increment();
          return HttpResponses.json(200, e.json());
        })
        .orElseGet(() -> HttpResponses.status(404, "NotFound",
            info.resource() + " \"" + info.name() + "\" not found in the hub cache (API server"
                + " unreachable)"));
  }

  private io.netty.handler.codec.http.FullHttpResponse list(RequestInfo info) {
    if (!policy.cachesComponent(info.component())) {
      return notCached(info);
    }
    LabelSelector labels;
    FieldSelector fields;
    try {
      labels = LabelSelector.parse(info.parameter("labelSelector"));
      fields = FieldSelector.parse(info.parameter("fieldSelector"));
    } catch (IllegalArgumentException e) {
      return HttpResponses.status(400, "BadRequest", e.getMessage());
    }
    ResourceRef ref = ResponseCacher.ref(info);
    DiskCache cache = cacher.cache();
    String memoKey = ref + "|" + info.namespace() + "|" + info.parameter("labelSelector") + "|"
        + info.parameter("fieldSelector");
    long generation = cache.generation(); // read before the files: a later write retires the memo
    ByteBuffer memo = lists.get(memoKey, generation);
    if (memo != null) {
      servedFromCache.increment();
      return HttpResponses.json(200, Unpooled.wrappedBuffer(memo));
    }
    List<DiskCache.Entry> entries = cache.list(ref, info.namespace());
    DiskCache.ListMeta meta = cache.listMeta(ref).orElse(null);
    ArrayNode items = json.createArrayNode();
    String kind = meta == null ? "" : meta.kind();
    long maxRv = -1;
    for (DiskCache.Entry e : entries) {
      JsonNode obj;
      try {
        obj = json.readTree(e.json());
      } catch (IOException ex) {
        log.warn("skipping unparsable cached object {}: {}", e.key(), ex.getMessage());
        continue;
      }
      if (kind.isEmpty()) {
        kind = obj.path("kind").asText("") + "List";
      }
      if (labels.test(obj) && fields.test(obj)) {
        items.add(obj);
        maxRv = Math.max(maxRv, parseRv(e.resourceVersion()));
      }
    }
    if (kind.isEmpty() || kind.equals("List") && meta == null) {
      return HttpResponses.status(503, "ServiceUnavailable",
          "hub: no cached list of " + ref + " (API server unreachable)");
    }
    if (items.isEmpty() && info.component().equals("kubelet") && info.resource().equals("pods")) {
      // An empty pod list would make the kubelet delete every pod it runs.
      return HttpResponses.status(503, "ServiceUnavailable",
          "hub: no pods cached for kubelet; refusing to answer an empty pod list while the API"
              + " server is unreachable");
    }
    String rv = meta != null && !meta.resourceVersion().isEmpty()
        ? meta.resourceVersion()
        : maxRv >= 0 ? Long.toString(maxRv) : "0";
    if (meta != null && maxRv > parseRv(rv)) {
      rv = Long.toString(maxRv);
    }
    ObjectNode list = json.createObjectNode();
    list.put("kind", kind);
    list.put("apiVersion", meta != null ? meta.apiVersion() : info.groupVersion());
    list.putObject("metadata").put("resourceVersion", rv);
    list.set("items", items);
    servedFromCache.increment();
    try {
      byte[] encoded = json.writeValueAsBytes(list);
      lists.put(memoKey, generation, encoded);
      return HttpResponses.json(200, encoded);
    } catch (IOException e) {
      throw new IllegalStateException("cannot encode list of " + ref, e);
    }
  }

  private io.netty.handler.codec.http.FullHttpResponse createEvent(RequestInfo info, byte[] body) {
    JsonNode event;
    try {
      event = json.readTree(body);
    } catch (IOException e) {
      return HttpResponses.status(400, "BadRequest", "hub: event body is not JSON: " + e.getMessage());
    }
    if (event == null || !event.isObject() || event.path("metadata").path("name").asText("").isEmpty()) {
      return HttpResponses.status(400, "BadRequest", "hub: event without metadata.name");
    }
    if (policy.cachesComponent(info.component())) {
      cacher.cacheObject(info, body);
    }
    servedFromCache.increment();
    return HttpResponses.json(201, body);
  }

  /** A discovery document: the one negotiated for this {@code Accept}, else a plain JSON one. */
  private io.netty.handler.codec.http.FullHttpResponse discovery(
      RequestInfo info, String accept, Reason reason) {
    if (!policy.cachesComponent(info.component())) {
      return notCached(info);
    }
    DiskCache cache = cacher.cache();
    Optional<DiscoveryDocument> doc = accept.isEmpty()
        ? Optional.empty() : cache.discovery(DiscoveryDocument.name(info.path(), accept));
    if (doc.isEmpty()) {
      doc = cache.discovery(DiscoveryDocument.name(info.path(), ""));
    }
    if (doc.isEmpty()) {
      return unavailable(info, reason);
    }
    servedFromCache.increment();
    FullHttpResponse r = HttpResponses.json(200, doc.get().body());
    if (!doc.get().contentType().isEmpty()) {
      r.headers().set(HttpHeaderNames.CONTENT_TYPE, doc.get().contentType());
    }
    return r;
  }

  private io.netty.handler.codec.http.FullHttpResponse notCached(RequestInfo info) {
    return HttpResponses.status(503, "ServiceUnavailable",
        "hub: API server unreachable and responses of component \"" + info.component()
            + "\" are not cached (see --cache-agents)");
  }

  private static io.netty.handler.codec.http.FullHttpResponse unavailable(
      RequestInfo info, Reason reason) {
    String what = info.resourceRequest() ? info.verb() + " " + info.resource() : info.verb() + " " + info.path();
    return reason == Reason.UPSTREAM_FAILED
        ? HttpResponses.status(502, "InternalError",
            "hub: request to the API server failed; " + what + " cannot be served from the cache")
        : HttpResponses.status(503, "ServiceUnavailable",
            "hub: no API server is reachable; " + what + " cannot be served from the cache");
  }

  private static long parseRv(String rv) {
    try {
      return Long.parseLong(rv);
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  private void holdWatch(RequestInfo info, Channel channel, boolean keepAlive) {
    Duration timeout = watchTimeout(info);
    HeldWatch watch = new HeldWatch(info, channel, keepAlive);
    heldWatches.add(watch);
    HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
    head.headers().set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON);
    HttpUtil.setTransferEncodingChunked(head, true);
    HttpUtil.setKeepAlive(head, keepAlive);
    channel.writeAndFlush(head);
    channel.closeFuture().addListener(f -> watch.end("client went away"));
    watch.start(timeout);
    log.debug("holding watch {} for {} with no events", info, timeout);
  }

  /** {@code timeoutSeconds} if given, else the min request timeout × U[1,2) like the apiserver. */
  private Duration watchTimeout(RequestInfo info) {
    String t = info.parameter("timeoutSeconds");
    if (!t.isEmpty()) {
      try {
        long s = Long.parseLong(t);
        if (s > 0) {
          return Duration.ofSeconds(s);
        }
      } catch (NumberFormatException e) {
        // fall through to the default, as the apiserver does for an unusable value
      }
    }
    long base = minRequestTimeout.toNanos();
    return Duration.ofNanos(base + (long) (random.nextDouble() * base));
  }

  /** One watch held open with no events. */
  private final class HeldWatch {
    private final RequestInfo info;
    private final Channel channel;
    private final boolean keepAlive;
    private final AtomicBoolean ended = new AtomicBoolean();
    private volatile ScheduledFuture<?> deadline;
    private volatile ScheduledFuture<?> healthCheck;

    HeldWatch(RequestInfo info, Channel channel, boolean keepAlive) {
      this.info = info;
      this.channel = channel;
      this.keepAlive = keepAlive;
    }

    void start(Duration timeout) {
      deadline = time.scheduler().schedule(
          () -> end("timeout"), timeout.toNanos(), TimeUnit.NANOSECONDS);
      long every = HEALTH_CHECK_INTERVAL.toNanos();
      healthCheck = time.scheduler().scheduleAtFixedRate(() -> {
        if (cloudHealthy.getAsBoolean()) {
          end("API server healthy again");
        }
      }, every, every, TimeUnit.NANOSECONDS);
      if (ended.get()) {
        cancelTimers(); // the client left before the timers were set
      }
    }

    void end(String why) {
      if (!ended.compareAndSet(false, true)) {
        return;
      }
      heldWatches.remove(this);
      cancelTimers();
      log.debug("ending held watch {}: {}", info, why);
      if (channel.isActive()) {
        var f = channel.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT);
        if (!keepAlive) {
          f.addListener(ChannelFutureListener.CLOSE);
        }
      }
    }

    private void cancelTimers() {
      ScheduledFuture<?> d = deadline;
      ScheduledFuture<?> h = healthCheck;
      if (d != null) {
        d.cancel(false);
      }
      if (h != null) {
        h.cancel(false);
      }
    }
  }
}
