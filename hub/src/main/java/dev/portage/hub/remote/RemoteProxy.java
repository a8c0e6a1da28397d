package dev.portage.hub.remote;

import dev.portage.core.balance.Pick;
import dev.portage.core.http.HopByHopHeaders;
import dev.portage.core.http.HttpClientPool;
import dev.portage.core.http.HttpProtocol;
import dev.portage.core.http.HttpStream;
import dev.portage.core.time.Ticker;
import dev.portage.hub.cache.CachePolicy;
import dev.portage.hub.cache.DiscoveryDocument;
import dev.portage.hub.cache.DiskCache;
import dev.portage.hub.cache.ResponseCacher;
import dev.portage.hub.proxy.RequestInfo;
import io.netty.channel.Channel;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpVersion;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Forwards one request to the API server a balancer picked, over core's {@link HttpClientPool}
 * (keep-alive HTTP/1.1, TLS with the hub's client certificate), and streams the answer back with
 * backpressure: the upstream is read only when the client's write has completed. The caller's
 * {@code Authorization} header passes through; without one, the hub's bootstrap token is sent. A
 * 2xx answer to a cacheable request is copied into the cache while it streams; {@code Upgrade}
 * requests (WebSocket watches, exec) become a byte relay after the 101. If the exchange fails before
 * the client got any byte, the fallback (the local proxy) answers instead. Thread-safe.
 */
public final class RemoteProxy {

  private static final Logger log = LoggerFactory.getLogger(RemoteProxy.class);

  /** Larger get/list bodies are streamed but not cached. */
  static final int MAX_CACHED_BODY = DiskCache.MAX_BODY_BYTES;

  /** Bytes of get/list answers that may wait for the cache writer; more are relayed uncached. */
  static final long MAX_CACHE_BACKLOG = 64L * 1024 * 1024;

  /** Told when an exchange failed before any byte reached the client. */
  @FunctionalInterface
  public interface Fallback {
    void onUpstreamFailure(Throwable cause);
  }

  private final HttpClientPool pool;
  private final ResponseCacher cacher;
  private final CachePolicy policy;
  private final Executor cacheWriter;
  private final Ticker ticker;
  private final Supplier<String> bootstrapToken;
  private final LongAdder uncached = new LongAdder();
  private final CacheBacklog backlog = new CacheBacklog(MAX_CACHE_BACKLOG);
  private final AtomicInteger runningExchanges = new AtomicInteger();
  private volatile Bearer lastBearer;

  /**
   * @param cacheWriter runs cache writes in submission order (one thread)
   * @param bootstrapToken the hub's token ({@code POST /v1/token}); "" or null for none
   */
  public RemoteProxy(
      HttpClientPool pool,
      ResponseCacher cacher,
      CachePolicy policy,
      Executor cacheWriter,
      Ticker ticker,
      Supplier<String> bootstrapToken) {
    this.pool = Objects.requireNonNull(pool, "pool");
    this.cacher = Objects.requireNonNull(cacher, "cacher");
    this.policy = Objects.requireNonNull(policy, "policy");
    this.cacheWriter = Objects.requireNonNull(cacheWriter, "cacheWriter");
    this.ticker = Objects.requireNonNull(ticker, "ticker");
    this.bootstrapToken = Objects.requireNonNull(bootstrapToken, "bootstrapToken");
  }

  /**
   * Responses that were meant for the cache but not stored (too large, writer backlog full); an
   * answer identical to the one already stored is not counted.
   */
  public long uncachedResponses() {
    return uncached.sum();
  }

  /**
   * Upstream exchanges running for connected clients (answers being relayed, watches); back to 0
   * when the hub is idle, whether or not the clients keep their connections open.
   */
  public int runningExchanges() {
    return runningExchanges.get();
  }

  /**
   * Forwards {@code request} to {@code pick}'s server and answers on {@code inbound}. Takes
   * ownership of {@code request} (released here) and of {@code pick} (ended here).
   *
   * @param keepAlive whether the client connection stays open after the answer
   * @param onResponse told the upstream status code once the answer starts (metrics)
   */
  public void forward(
      RequestInfo info,
      FullHttpRequest request,
      Channel inbound,
      boolean keepAlive,
      Pick<ApiServer> pick,
      java.util.function.IntConsumer onResponse,
      Fallback fallback) {
    ApiServer server = pick.target();
    boolean upgrade = isUpgrade(request);
    String upgradeTo = request.headers().get(HttpHeaderNames.UPGRADE);
    // The decoded request is ours: forwarded edited in place (a copy re-validated every header).
    FullHttpRequest out = request;
    out.setProtocolVersion(HttpVersion.HTTP_1_1);
    HopByHopHeaders.strip(out.headers(), HttpProtocol.HTTP_1_1);
    HttpHeaders h = out.headers();
    h.set(HttpHeaderNames.HOST, server.hostHeader());
    int length = out.content().readableBytes();
    if (length == 0) {
      h.set(HttpHeaderNames.CONTENT_LENGTH, HttpHeaderValues.ZERO); // no int-to-string per GET
    } else {
      h.setInt(HttpHeaderNames.CONTENT_LENGTH, length);
    }
    if (upgrade) {
      h.set(HttpHeaderNames.CONNECTION, HttpHeaderValues.UPGRADE);
      h.set(HttpHeaderNames.UPGRADE, upgradeTo);
    }
    if (!h.contains(HttpHeaderNames.AUTHORIZATION)) {
      String bearer = bearer();
      if (bearer != null) {
        h.set(HttpHeaderNames.AUTHORIZATION, bearer);
      }
    }
    long start = ticker.nanoTime();
    ResponseTee tee = null;
    if (!upgrade && policy.isCacheable(info)) {
      tee = new ResponseTee(info, cacher, cacheWriter, MAX_CACHED_BODY, uncached, backlog, null);
    } else if (!upgrade && isDiscovery(info, policy)) {
      String accept = request.headers().get(HttpHeaderNames.ACCEPT, "");
      tee = new ResponseTee(info, cacher, cacheWriter, MAX_CACHED_BODY, uncached, backlog, accept);
    }
    ResponseTee cacheTee = tee;
    HttpStream idle = pool.leaseIdle(server.address(), HttpProtocol.HTTP_1_1, inbound.eventLoop());
    if (idle != null) {
      // An idle keep-alive connection (nearly every request): no future, no callback object.
      begin(idle, null, info, out, inbound, keepAlive, upgrade, pick, cacheTee, start,
          onResponse, fallback);
      return;
    }
    CompletableFuture<HttpStream> leased =
        pool.acquire(server.address(), HttpProtocol.HTTP_1_1, inbound.eventLoop());
    leased.whenComplete((stream, error) -> begin(stream, error, info, out, inbound, keepAlive,
        upgrade, pick, cacheTee, start, onResponse, fallback));
  }

  /** Runs the exchange on a leased {@code stream}, or falls back when the lease failed. */
  private void begin(HttpStream stream, Throwable error, RequestInfo info, FullHttpRequest out,
      Channel inbound, boolean keepAlive, boolean upgrade, Pick<ApiServer> pick, ResponseTee tee,
      long startNanos, java.util.function.IntConsumer onResponse, Fallback fallback) {
    if (error != null) {
      out.release();
      pick.fail();
      log.debug("{}: cannot reach {}: {}", info, pick.target(), error.toString());
      inbound.eventLoop().execute(() -> fallback.onUpstreamFailure(error));
      return;
    }
    if (!inbound.isActive()) {
      out.release();
      pick.cancel();
      stream.release();
      return;
    }
    UpstreamExchange exchange =
        new UpstreamExchange(info, out.method(), stream, inbound, keepAlive, upgrade,
            pick, tee, ticker, startNanos, onResponse, fallback,
            ClientExchanges.of(inbound, runningExchanges));
    if (upgrade) {
      stream.attach(exchange); // after a 101 it takes HTTP out of the pipeline itself
    } else {
      // Read through the connection's permanent handler: no pipeline change per exchange.
      stream.attachReader(exchange);
    }
    exchange.send(out);
  }

  /** The {@code Authorization} value for the bootstrap token, or null; built once per token. */
  private String bearer() {
    String token = bootstrapToken.get();
    if (token == null || token.isEmpty()) {
      return null;
    }
    Bearer last = lastBearer;
    if (last == null || !last.token().equals(token)) {
      last = new Bearer(token, "Bearer " + token);
      lastBearer = last; // a race only builds the same value twice
    }
    return last.header();
  }

  private record Bearer(String token, String header) {}

  /** Whether {@code info} is a discovery GET of a cached component (cached, served offline). */
  public static boolean isDiscovery(RequestInfo info, CachePolicy policy) {
    return !info.resourceRequest() && info.verb().equals("get")
        && policy.cachesComponent(info.component())
        && DiscoveryDocument.isDiscoveryPath(info.path());
  }

  /**
   * Whether the request asks to switch protocols end to end (WebSocket, SPDY for exec). An {@code
   * h2c} upgrade is about the client's own hop and is dropped like any hop-by-hop header.
   */
  public static boolean isUpgrade(FullHttpRequest request) {
    String to = request.headers().get(HttpHeaderNames.UPGRADE);
    return to != null && !to.isBlank() && !to.trim().equalsIgnoreCase("h2c");
  }
}
