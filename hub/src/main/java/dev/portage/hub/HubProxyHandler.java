package dev.portage.hub;

import dev.portage.core.balance.Pick;
import dev.portage.core.http.KeepAlive;
import dev.portage.hub.local.LocalProxy;
import dev.portage.hub.proxy.HttpResponses;
import dev.portage.hub.proxy.RequestInfo;
import dev.portage.hub.proxy.RequestInfoCache;
import dev.portage.hub.remote.ApiServer;
import dev.portage.hub.remote.RemoteProxy;
import dev.portage.hub.remote.Upstreams;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The hub's request path for one client connection, top to bottom: resolve the request info, apply
 * the in-flight limit (watches and other long-running requests are not counted), then proxy to a
 * healthy API server, or answer locally when none is healthy or the remote exchange fails before
 * answering. As the connection's outbound side it sees each answer's head (metrics) and end (the
 * in-flight slot is freed). One instance per connection, on its event loop; HTTP/1.1 requests are
 * handled one at a time.
 */
final class HubProxyHandler extends ChannelDuplexHandler {

  private static final Logger log = LoggerFactory.getLogger(HubProxyHandler.class);

  /** Subresources that stream for as long as the client wants, like the apiserver's list. */
  private static final Set<String> LONG_RUNNING_SUBRESOURCES =
      Set.of("log", "exec", "attach", "portforward", "proxy");

  private static final byte[] NO_BYTES = new byte[0];
  private static final IntConsumer IGNORE_CODE = code -> { };

  private final Upstreams upstreams;
  private final RemoteProxy remote;
  private final LocalProxy local;
  private final HubMetrics metrics;
  private final HubMetrics.RequestCounter counter;
  private final RequestInfoCache.Connection requests;
  private final AtomicInteger inFlight;
  private final int maxInFlight;

  private RequestInfo current; // event loop only
  private boolean counted; // event loop only

  HubProxyHandler(Upstreams upstreams, RemoteProxy remote, LocalProxy local, HubMetrics metrics,
      RequestInfoCache requests, AtomicInteger inFlight, int maxInFlight) {
    this.upstreams = upstreams;
    this.remote = remote;
    this.local = local;
    this.metrics = metrics;
    this.counter = metrics.requestCounter();
    this.requests = requests.connection();
    this.inFlight = inFlight;
    this.maxInFlight = maxInFlight;
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (!(msg instanceof FullHttpRequest request)) {
      ReferenceCountUtil.release(msg);
      return;
    }
    boolean keepAlive = KeepAlive.isKeepAlive(request);
    if (!request.decoderResult().isSuccess()) {
      request.release();
      HttpResponses.send(ctx.channel(),
          HttpResponses.status(400, "BadRequest", "hub: malformed HTTP request"), false);
      return;
    }
    RequestInfo info = requests.resolve(
        request.method().name(), request.uri(), request.headers().get(HttpHeaderNames.USER_AGENT));
    boolean upgrade = RemoteProxy.isUpgrade(request);
    boolean longRunning =
        info.isWatch() || upgrade || info.verb().equals("proxy")
            || (!info.subresource().isEmpty()
                && LONG_RUNNING_SUBRESOURCES.contains(info.subresource()));
    current = info;
    if (!longRunning) {
      if (inFlight.incrementAndGet() > maxInFlight) {
        inFlight.decrementAndGet();
        request.release();
        metrics.rejected();
        FullHttpResponse tooMany = HttpResponses.status(429, "TooManyRequests",
            "hub: too many requests in flight (--max-requests-in-flight " + maxInFlight + ")");
        tooMany.headers().set(HttpHeaderNames.RETRY_AFTER, "1");
        HttpResponses.send(ctx.channel(), tooMany, keepAlive);
        return;
      }
      counted = true;
    }
    log.debug("{} {}", info, request.uri());
    Pick<ApiServer> pick = upstreams.pick();
    // Kept for the fallback: the forwarded request's buffer belongs to the exchange. The local
    // request itself is built only when the fallback runs (rarely, online).
    String accept = request.headers().get(HttpHeaderNames.ACCEPT, "");
    String contentType = request.headers().get(HttpHeaderNames.CONTENT_TYPE, "");
    ByteBuf content = request.content();
    byte[] body = content.isReadable() ? ByteBufUtil.getBytes(content) : NO_BYTES;
    if (pick == null) {
      request.release();
      local.serve(new LocalProxy.Request(info, accept, contentType, body), ctx.channel(),
          keepAlive, LocalProxy.Reason.NO_HEALTHY_UPSTREAM);
      return;
    }
    remote.forward(info, request, ctx.channel(), keepAlive, pick, IGNORE_CODE,
        cause -> {
          if (ctx.channel().isActive()) {
            local.serve(new LocalProxy.Request(info, accept, contentType, body), ctx.channel(),
                keepAlive, LocalProxy.Reason.UPSTREAM_FAILED);
          }
        });
  }

  @Override
  public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
    RequestInfo info = current;
    if (msg instanceof HttpResponse response && info != null) {
      counter.count(info.verb(), info.resource(), response.status().code());
    }
    if (msg instanceof LastHttpContent || msg instanceof FullHttpResponse) {
      release();
    }
    ctx.write(msg, promise);
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    release();
    ctx.fireChannelInactive();
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    log.debug("client connection {} failed", ctx.channel(), cause);
    ctx.close();
  }

  private void release() {
    if (counted) {
      counted = false;
      inFlight.decrementAndGet();
    }
  }
}
