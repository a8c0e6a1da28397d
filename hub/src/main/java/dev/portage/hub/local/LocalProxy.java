package dev.portage.hub.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.portage.core.time.TimeSource;
import dev.portage.hub.cache.CachePolicy;
import dev.portage.hub.cache.CacheScope;
import dev.portage.hub.cache.DiscoveryDocument;
import dev.portage.hub.cache.DiskCache;
import dev.portage.hub.cache.ResourceRef;
import dev.portage.hub.cache.ResponseCacher;
import dev.portage.hub.codec.AcceptHeader;
import dev.portage.hub.codec.CodecException;
import dev.portage.hub.codec.Encoding;
import dev.portage.hub.codec.KubeCodec;
import dev.portage.hub.proxy.HttpResponses;
import dev.portage.hub.proxy.RequestInfo;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
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
 * disk cache of the calling component, with label and field selectors, in the encoding the
 * client's {@code Accept} asks for (protobuf or JSON, whatever the object was cached in); watch
 * held open with no events until its timeout or until the cloud is healthy again, so the client
 * re-lists; created {@code events} stored and echoed with 201; the kubelet's own node Lease
 * renewals echoed and its node status updates answered with the cached Node (so its sync loops
 * carry on, as YurtHub does); delete refused with 403; anything else a Kubernetes {@code Status}
 * error.
 *
 * <p>Thread-safe. {@link #serve} may be called on an event loop: disk reads run on the injected
 * I/O executor, watch timers on the injected scheduler.
 */
public final class LocalProxy {

  private static final Logger log = LoggerFactory.getLogger(LocalProxy.class);

  private static final String[] METADATA_NAME = {"metadata", "name"};

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
  private final KubeCodec codec;
  private final ObjectRenderer renderer;
  private final ListAssembler lists;
  private final TimeSource time;
  private final BooleanSupplier cloudHealthy;
  private final Duration minRequestTimeout;
  private final RandomGenerator random;
  private final Executor io;
  private final Set<HeldWatch> heldWatches = ConcurrentHashMap.newKeySet();
  private final LongAdder servedFromCache = new LongAdder();
  private final ListMemo memo = new ListMemo();

  /**
   * @param cloudHealthy whether any API server is healthy now; read by held watches every 2 s
   * @param minRequestTimeout a held watch without {@code timeoutSeconds} ends after this × U[1,2)
   * @param io runs the blocking disk reads and writes
   */
  public LocalProxy(
      ResponseCacher cacher,
      CachePolicy policy,
      ObjectMapper json,
      KubeCodec codec,
      TimeSource time,
      BooleanSupplier cloudHealthy,
      Duration minRequestTimeout,
      RandomGenerator random,
      Executor io) {
    this.cacher = Objects.requireNonNull(cacher, "cacher");
    this.policy = Objects.requireNonNull(policy, "policy");
    this.json = Objects.requireNonNull(json, "json");
    this.codec = Objects.requireNonNull(codec, "codec");
    this.renderer = new ObjectRenderer(codec);
    this.lists = new ListAssembler(json, codec);
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
   * What the local proxy reads of a request besides its {@link RequestInfo}.
   *
   * @param accept the {@code Accept} header, "" for none
   * @param contentType the {@code Content-Type} of {@code body}, "" for none
   * @param body the request body (creates, updates); the caller keeps ownership of its buffers
   */
  public record Request(RequestInfo info, String accept, String contentType, byte[] body) {
    public Request {
      Objects.requireNonNull(info, "info");
      Objects.requireNonNull(accept, "accept");
      Objects.requireNonNull(contentType, "contentType");
      Objects.requireNonNull(body, "body");
    }
  }

  /** Answers one request without {@code Accept} or {@code Content-Type} (JSON) on {@code channel}. */
  public void serve(RequestInfo info, byte[] body, Channel channel, boolean keepAlive, Reason reason) {
    serve(new Request(info, "", "", body), channel, keepAlive, reason);
  }

  /** Answers one request on {@code channel}. */
  public void serve(Request request, Channel channel, boolean keepAlive, Reason reason) {
    RequestInfo info = request.info();
    if (!policy.cachesAnything()) {
      // A hub that only proxies (cloud working mode) has no cache to answer from.
      HttpResponses.send(channel, unavailable(info, reason), keepAlive);
      return;
    }
    if (info.resourceRequest() && info.isWatch()) {
      holdWatch(info, request.accept(), channel, keepAlive);
      return;
    }
    try {
      io.execute(() -> {
        FullHttpResponse response;
        try {
          response = answer(request, reason);
        } catch (RuntimeException | Error e) {
          // Answered even when the cache fails badly (an OutOfMemoryError included): a request is
          // never left without an answer.
          log.warn("local proxy failed on {}", info, e);
          HttpResponses.send(channel,
              HttpResponses.status(500, "InternalError", "hub: " + e), false);
          if (e instanceof Error error) {
            throw error;
          }
          return;
        }
        HttpResponses.send(channel, response, keepAlive);
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

  private FullHttpResponse answer(Request request, Reason reason) {
    RequestInfo info = request.info();
    if (!info.resourceRequest()) {
      if (info.verb().equals("get") && DiscoveryDocument.isDiscoveryPath(info.path())) {
        return discovery(info, request.accept(), reason);
      }
      return unavailable(info, reason);
    }
    List<Encoding> acceptable = acceptable(info, request.accept());
    CacheScope scope = cacher.scope();
    switch (info.verb()) {
      case "get":
        if (!info.subresource().isEmpty() && !info.subresource().equals("status")) {
          return unavailable(info, reason);
        }
        return get(info, acceptable);
      case "list":
        return list(info, acceptable);
      case "create":
        if (info.resource().equals("events") && info.subresource().isEmpty()) {
          return createEvent(request, acceptable);
        }
        if (isKubelet(info) && info.subresource().isEmpty()
            && (scope.isOwnNode(info) || scope.isOwnLease(info))) {
          return echo(request, 201, acceptable); // YurtHub: kubelet's registrations accepted
        }
        return unavailable(info, reason);
      case "update":
        if (isKubelet(info) && scope.isOwnLease(info) && info.subresource().isEmpty()) {
          return echo(request, 200, acceptable); // the renewal, as the API server would return it
        }
        if (isKubelet(info) && scope.isOwnNode(info) && info.subresource().equals("status")) {
          return get(info, acceptable);
        }
        return unavailable(info, reason);
      case "patch":
        if (isKubelet(info) && scope.isOwnNode(info) && info.subresource().equals("status")) {
          return get(info, acceptable); // YurtHub: the cached Node, the change not applied
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

  /**
   * The encodings {@code accept} allows that the hub can answer {@code info}'s kind in: protobuf
   * only for built-in groups (custom resources have no protobuf form, as on the API server).
   */
  private List<Encoding> acceptable(RequestInfo info, String accept) {
    List<Encoding> all = AcceptHeader.acceptable(accept);
    if (all.contains(Encoding.PROTOBUF) && !codec.types().hasGroupVersion(info.groupVersion())) {
      List<Encoding> json = new ArrayList<>(all);
      json.remove(Encoding.PROTOBUF);
      return json;
    }
    return all;
  }

  private static boolean isKubelet(RequestInfo info) {
    return info.component().equals("kubelet");
  }

  private FullHttpResponse get(RequestInfo info, List<Encoding> acceptable) {
    if (!policy.cachesComponent(info.component())) {
      return notCached(info);
    }
    if (acceptable.isEmpty()) {
      return ObjectRenderer.notAcceptable(acceptable, info.resource());
    }
    ResourceRef ref = ResponseCacher.ref(info);
    Optional<DiskCache.Entry> entry = cacher.cache().get(ref.key(info.namespace(), info.name()));
    if (entry.isEmpty()) {
      return HttpResponses.status(404, "NotFound",
          info.resource() + " \"" + info.name() + "\" not found in the hub cache (API server"
              + " unreachable)");
    }
    servedFromCache.increment();
    DiskCache.Entry e = entry.get();
    return renderer.render(200, e.body(), e.encoding(), acceptable, e.key().toString());
  }

  private FullHttpResponse list(RequestInfo info, List<Encoding> acceptable) {
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
    if (acceptable.isEmpty()) {
      return ObjectRenderer.notAcceptable(acceptable, info.resource());
    }
    Encoding target = acceptable.get(0);
    ResourceRef ref = ResponseCacher.ref(info);
    DiskCache cache = cacher.cache();
    String memoKey = ref + "|" + info.namespace() + "|" + info.parameter("labelSelector") + "|"
        + info.parameter("fieldSelector") + "|" + target;
    long generation = cache.generation(); // read before the files: a later write retires the memo
    ByteBuffer memoised = memo.get(memoKey, generation);
    if (memoised != null) {
      servedFromCache.increment();
      return HttpResponses.of(200, target.contentType(), Unpooled.wrappedBuffer(memoised));
    }
    List<DiskCache.Entry> entries = cache.list(ref, info.namespace());
    DiskCache.ListMeta meta = cache.listMeta(ref).orElse(null);
    ListAssembler.Built built =
        lists.build(entries, meta, info.groupVersion(), labels, fields, target);
    if (built == null) {
      return HttpResponses.status(503, "ServiceUnavailable",
          "hub: no cached list of " + ref + " (API server unreachable)");
    }
    if (built.items() == 0 && isKubelet(info) && info.resource().equals("pods")) {
      // An empty pod list would make the kubelet delete every pod it runs.
      return HttpResponses.status(503, "ServiceUnavailable",
          "hub: no pods cached for kubelet; refusing to answer an empty pod list while the API"
              + " server is unreachable");
    }
    servedFromCache.increment();
    memo.put(memoKey, generation, built.body());
    return HttpResponses.of(200, target.contentType(), built.body());
  }

  /** {@code request}'s own body, in the first acceptable encoding, with {@code code}. */
  private FullHttpResponse echo(Request request, int code, List<Encoding> acceptable) {
    Encoding held = Encoding.ofContentType(request.contentType());
    if (held == null) {
      return HttpResponses.status(415, "UnsupportedMediaType", "hub: cannot read a body of type \""
          + request.contentType() + "\" while the API server is unreachable");
    }
    servedFromCache.increment();
    return renderer.render(code, request.body(), held, acceptable, request.info().toString());
  }

  private FullHttpResponse createEvent(Request request, List<Encoding> acceptable) {
    RequestInfo info = request.info();
    Encoding encoding = Encoding.ofContentType(request.contentType());
    String name;
    if (encoding == Encoding.PROTOBUF) {
      try {
        name = ObjectFields.of(codec.decode(request.body())).field(METADATA_NAME);
      } catch (CodecException e) {
        return HttpResponses.status(400, "BadRequest", "hub: event body is not a protobuf object: "
            + e.getMessage());
      }
    } else if (encoding == Encoding.JSON) {
      JsonNode event;
      try {
        event = json.readTree(request.body());
      } catch (IOException e) {
        return HttpResponses.status(400, "BadRequest", "hub: event body is not JSON: " + e.getMessage());
      }
      name = event == null || !event.isObject() ? ""
          : event.path("metadata").path("name").asText("");
    } else {
      return HttpResponses.status(415, "UnsupportedMediaType", "hub: cannot read an event of type \""
          + request.contentType() + "\"");
    }
    if (name.isEmpty()) {
      return HttpResponses.status(400, "BadRequest", "hub: event without metadata.name");
    }
    if (policy.cachesComponent(info.component())) {
      cacher.cacheObject(info, request.body(), encoding);
    }
    return echo(request, 201, acceptable);
  }

  /** A discovery document: the one negotiated for this {@code Accept}, else a plain JSON one. */
  private FullHttpResponse discovery(
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

  private FullHttpResponse notCached(RequestInfo info) {
    return HttpResponses.status(503, "ServiceUnavailable",
        "hub: API server unreachable and responses of component \"" + info.component()
            + "\" are not cached (see --cache-agents)");
  }

  private static FullHttpResponse unavailable(
      RequestInfo info, Reason reason) {
    String what = info.resourceRequest() ? info.verb() + " " + info.resource() : info.verb() + " " + info.path();
    return reason == Reason.UPSTREAM_FAILED
        ? HttpResponses.status(502, "InternalError",
            "hub: request to the API server failed; " + what + " cannot be served from the cache")
        : HttpResponses.status(503, "ServiceUnavailable",
            "hub: no API server is reachable; " + what + " cannot be served from the cache");
  }

  private void holdWatch(RequestInfo info, String accept, Channel channel, boolean keepAlive) {
    List<Encoding> acceptable = acceptable(info, accept);
    if (acceptable.isEmpty()) {
      HttpResponses.send(channel, ObjectRenderer.notAcceptable(acceptable, info.resource()),
          keepAlive);
      return;
    }
    Duration timeout = watchTimeout(info);
    HeldWatch watch = new HeldWatch(info, channel, keepAlive);
    heldWatches.add(watch);
    HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
    // As the API server: the watch stream's type (protobuf frames, or JSON objects), though no
    // event will come.
    head.headers().set(HttpHeaderNames.CONTENT_TYPE, acceptable.get(0).watchContentType());
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
