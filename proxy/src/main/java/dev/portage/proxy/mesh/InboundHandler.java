package dev.portage.proxy.mesh;

import dev.portage.core.http.HeaderLines;
import dev.portage.core.http.HopByHopHeaders;
import dev.portage.core.http.HttpFraming;
import dev.portage.core.http.HttpProtocol;
import dev.portage.core.http.KeepAlive;
import dev.portage.core.time.Ticker;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.netty.util.AsciiString;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.EventExecutor;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CancellationException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The inbound boundary of one client HTTP/1.1 connection or HTTP/2 stream: turns each request into
 * a {@link ProxyRequest} for the stack, writes the response head and streams the body back, and
 * turns failures into their HTTP answer exactly once. Confined to the channel's event loop.
 *
 * <p>HTTP/1.1 framing is strict (RFC 9112): a request with a second {@code Host}, or whose
 * absolute-form target names another authority than its {@code Host}, gets 400; a request body
 * whose chunked framing is invalid gets 400 and the connection closes, and the request never
 * reaches an endpoint when the bad framing arrives in the same read as its head (a request with a
 * body is dispatched at the end of the read that brought its head, so a smuggling attempt in one
 * packet is refused whole); later, the upstream exchange is aborted so the endpoint never sees a
 * complete request. Requests are handled one at a time: one that arrives while another is in flight
 * (pipelined, in the same read as the previous body or head) is held and answered in order.
 */
final class InboundHandler extends ChannelInboundHandlerAdapter implements Reply, ResponseBody.BodyEnd {

  private static final Logger log = LoggerFactory.getLogger(InboundHandler.class);

  /** Request bodies up to this size are kept for retries (Linkerd's 64 KiB). */
  static final int REPLAY_LIMIT = 64 * 1024;

  private final Service stack;
  private final HttpProtocol protocol;
  private final Ticker ticker;
  private final SidecarMetrics metrics;
  private final InflightCounter inflight;
  private ProxyRequest current;
  private boolean keepAlive = true;
  private ChannelHandlerContext ctx; // set in handlerAdded
  private EventExecutor loop; // ctx's
  private ArrayDeque<Object> held; // messages read while a request was in flight (HTTP/1.1)
  private boolean draining;
  private String lastHost; // the previous request's Host and its authority (null: invalid)
  private String lastAuthority;
  private ProxyRequest undispatched; // a request with a body, dispatched at the end of the read
  private boolean responding; // the current request's response head has been written
  private ResponseBody piped; // the body being relayed to the client, and its request
  private ProxyRequest pipedRequest;
  private String metricsAuthority; // the authority and route routeMetrics counts (by identity)
  private RouteSnapshot metricsRoute;
  private SidecarMetrics.RouteMetrics routeMetrics;

  /** Counts requests between their head and the end of their response, for readiness and tests. */
  interface InflightCounter {
    void add(int delta);
  }

  InboundHandler(Service stack, HttpProtocol protocol, Ticker ticker, SidecarMetrics metrics, InflightCounter inflight) {
    this.stack = stack;
    this.protocol = protocol;
    this.ticker = ticker;
    this.metrics = metrics;
    this.inflight = inflight;
  }

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) {
    this.ctx = ctx;
    loop = ctx.executor();
    if (ctx.channel().isActive()) {
      ctx.read();
    }
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) {
    ctx.read();
    ctx.fireChannelActive();
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if ((held != null && !held.isEmpty()) || (current != null && msg instanceof HttpRequest)) {
      // The next request (and what follows it) while one is in flight: kept, in order, until the
      // response is done. No more reads are asked for meanwhile, so at most one read's worth.
      if (held == null) {
        held = new ArrayDeque<>(2);
      }
      held.add(msg);
      return;
    }
    dispatch(ctx, msg);
  }

  @Override
  public void channelReadComplete(ChannelHandlerContext ctx) {
    dispatchUndispatched(ctx);
    ctx.fireChannelReadComplete();
  }

  /** Sends a request with a body on once the read that brought its head was seen whole. */
  private void dispatchUndispatched(ChannelHandlerContext ctx) {
    ProxyRequest r = undispatched;
    if (r != null) {
      undispatched = null;
      call(ctx, r);
    }
  }

  private void dispatch(ChannelHandlerContext ctx, Object msg) {
    if (msg instanceof HttpRequest req) {
      try {
        start(ctx, req);
      } finally {
        ReferenceCountUtil.release(req);
      }
    } else if (msg instanceof HttpContent c) {
      if (c.decoderResult().isFailure()) {
        Throwable cause = c.decoderResult().cause();
        c.release();
        badBody(ctx, cause);
      } else if (current != null) {
        current.body.onContent(c);
      } else {
        c.release();
      }
    } else {
      ReferenceCountUtil.release(msg);
    }
  }

  /**
   * The body's framing is invalid (a bad chunk size, chunk data not ended by CRLF, a bad trailer):
   * 400 and close. A request not dispatched yet never reaches an endpoint; one already sent is
   * cancelled, which aborts its upstream exchange mid-body.
   */
  private void badBody(ChannelHandlerContext ctx, Throwable cause) {
    keepAlive = false;
    ProxyRequest r = current;
    log.debug("{}: invalid request body framing: {}", ctx.channel(), cause.toString());
    if (r == null) {
      writeError(ctx, null, 400, "bad request: " + cause.getMessage());
      return;
    }
    boolean sent = undispatched != r;
    undispatched = null;
    // Answered (and so finished) before the cancel: the cancelled stack's own failure then finds
    // the request over and answers nothing.
    if (responding) {
      ctx.close(); // the response has begun: closing is the only way left to tell the client
      finish(ctx, r, false);
    } else {
      writeError(ctx, r, 400, "bad request: " + cause.getMessage());
    }
    if (sent) {
      r.cancel(); // aborts the upstream exchange mid-body
    }
  }

  private void start(ChannelHandlerContext ctx, HttpRequest req) {
    keepAlive = protocol == HttpProtocol.H2C || KeepAlive.isKeepAlive(req);
    if (req.decoderResult().isFailure()) {
      keepAlive = false;
      Throwable cause = req.decoderResult().cause();
      // Size limits get their own status so clients can tell "too big" from "garbled".
      int status = cause instanceof TooLongHttpHeaderException ? 431
          : cause instanceof TooLongHttpLineException ? 414
          : 400;
      writeError(ctx, null, status, "bad request: " + cause.getMessage());
      return;
    }
    String host = req.headers().get(HttpHeaderNames.HOST);
    if (host == null || host.isBlank()) {
      writeError(ctx, null, 400, "missing Host header or :authority");
      return;
    }
    int seen = scanHeaders(req, host);
    if ((seen & SECOND_HOST) != 0) {
      writeError(ctx, null, 400, "more than one Host header");
      return;
    }
    String authority;
    if (host.equals(lastHost)) {
      // A keep-alive client sends the same Host every time: parse and validate it once.
      authority = lastAuthority;
    } else {
      authority = authority(req);
      lastHost = host;
      lastAuthority = authority;
    }
    if (authority == null) {
      writeError(ctx, null, 400, "invalid Host header or :authority: " + host.trim());
      return;
    }
    String uri = req.uri();
    if (!uri.isEmpty() && uri.charAt(0) != '/' && protocol == HttpProtocol.HTTP_1_1) {
      String target = AbsoluteForm.authority(uri);
      if (target != null) {
        if (!AbsoluteForm.sameAuthority(uri, target, host)) {
          writeError(ctx, null, 400, "request target authority " + target + " does not match Host " + host.trim());
          return;
        }
        uri = AbsoluteForm.originForm(uri); // the endpoint gets the origin form, as from any client
      }
    }
    boolean hasBody = HttpFraming.hasBody(req, protocol, null);
    // The decoded request is ours: it becomes the proxied head (its headers without a copy); only
    // a full request (HTTP/2 without a body), whose content goes to the body below, gets a new head.
    HttpRequest head;
    if (req instanceof FullHttpRequest) {
      head = new DefaultHttpRequest(HttpVersion.HTTP_1_1, req.method(), uri, req.headers());
    } else {
      head = req;
      if (req.protocolVersion() != HttpVersion.HTTP_1_1) {
        req.setProtocolVersion(HttpVersion.HTTP_1_1);
      }
      if (!uri.equals(req.uri())) {
        req.setUri(uri);
      }
    }
    HopByHopHeaders.strip(head.headers(), protocol);
    RequestBody body = RequestBody.of(ctx.channel(), hasBody, REPLAY_LIMIT);
    ProxyRequest r = new ProxyRequest(
        head, authority, protocol, body, ctx.channel().eventLoop(), ticker.nanoTime(), (seen & GRPC) != 0);
    current = r;
    responding = false;
    inflight.add(1);
    if (req instanceof FullHttpRequest full) {
      body.onContent(new DefaultLastHttpContent(full.content().retain(), full.trailingHeaders()));
    }
    log.debug("{} {}", ctx.channel(), r);
    if (hasBody && protocol == HttpProtocol.HTTP_1_1 && !body.isComplete()) {
      // Dispatched when this read is done (channelReadComplete): a body whose framing is bad in
      // the same read is refused before anything is sent.
      undispatched = r;
      return;
    }
    if (protocol == HttpProtocol.HTTP_1_1 && keepAlive && !hasBody) {
      // Read on at once instead of after the response: the read interest then stays set, where
      // asking again after every response costs two epoll_ctl calls per request. A keep-alive
      // client sends its next request after this response anyway; an early one is held above.
      if (held == null) {
        held = new ArrayDeque<>(2);
      }
      ctx.read();
    }
    call(ctx, r);
  }

  private void call(ChannelHandlerContext ctx, ProxyRequest r) {
    stack.call(r, this);
  }

  /** The stack's answer to {@code r}: this connection's handler hears every request's. */
  @Override
  public void done(ProxyRequest r, ProxyResponse resp, Throwable err) {
    // Inline when the stack answers on this loop (the usual case: the upstream connection is
    // registered here too); a hop only when it answers elsewhere (timer, discovery).
    if (loop.inEventLoop()) {
      respond(ctx, r, resp, err);
    } else {
      loop.execute(() -> respond(ctx, r, resp, err));
    }
  }

  /** {@link #scanHeaders}: the request carries a Host it must not. */
  private static final int SECOND_HOST = 1;

  /** {@link #scanHeaders}: the request is gRPC ({@link GrpcStatus#isGrpc}). */
  private static final int GRPC = 2;

  // scanHeaders' own state: a Host and a Content-Type were seen.
  private static final int HOST_SEEN = 4;
  private static final int TYPE_SEEN = 8;

  /**
   * What one pass over the request's headers tells ({@link #SECOND_HOST}, {@link #GRPC}): whether
   * it carries a {@code Host} besides {@code first}, always a 400 in HTTP/1.1 (RFC 9112 §3.2), while
   * over HTTP/2 a {@code host} equal to {@code :authority} is allowed (RFC 9113 §8.3.1); and whether
   * its first {@code content-type} is gRPC's. One walk over the few headers a request has, where a
   * lookup by name per question hashes the name and walks its bucket each time.
   */
  private int scanHeaders(HttpRequest req, String first) {
    HttpHeaders headers = req.headers();
    int seen = 0;
    int lines = HeaderLines.count(headers);
    if (lines >= 0) {
      for (int i = 0; i < lines; i++) {
        seen = scanHeader(seen, HeaderLines.name(headers, i), HeaderLines.value(headers, i), first);
      }
    } else {
      Iterator<Map.Entry<CharSequence, CharSequence>> it = headers.iteratorCharSequence();
      while (it.hasNext()) {
        Map.Entry<CharSequence, CharSequence> h = it.next();
        seen = scanHeader(seen, h.getKey(), h.getValue(), first);
      }
    }
    return seen & (SECOND_HOST | GRPC);
  }

  /** {@link #scanHeaders}' answer so far with one more header line; also tracks what it has seen. */
  private int scanHeader(int seen, CharSequence name, CharSequence value, String first) {
    if (AsciiString.contentEqualsIgnoreCase(name, HttpHeaderNames.HOST)) {
      if ((seen & HOST_SEEN) != 0 && (protocol == HttpProtocol.HTTP_1_1
          || !first.trim().equalsIgnoreCase(value.toString().trim()))) {
        seen |= SECOND_HOST;
      }
      return seen | HOST_SEEN;
    }
    if ((seen & TYPE_SEEN) == 0 && AsciiString.contentEqualsIgnoreCase(name, HttpHeaderNames.CONTENT_TYPE)) {
      seen |= TYPE_SEEN;
      if (GrpcStatus.isGrpc(value)) {
        seen |= GRPC;
      }
    }
    return seen;
  }

  /**
   * {@code host:port} in lower case from Host (HTTP/2's :authority arrives as Host); port 80 if
   * absent; null if missing or not a host with an optional port in 1..65535 (such a name could
   * never resolve, so it is refused before reaching discovery).
   */
  static String authority(HttpRequest req) {
    String host = req.headers().get(HttpHeaderNames.HOST);
    if (host == null || host.isBlank()) {
      return null;
    }
    host = host.trim().toLowerCase(Locale.ROOT);
    int colon = host.lastIndexOf(':');
    boolean hasPort = colon >= 0 && colon > host.lastIndexOf(']');
    if (!hasPort) {
      return validHost(host) ? host + ":80" : null;
    }
    return validHost(host.substring(0, colon)) && validPort(host.substring(colon + 1)) ? host : null;
  }

  private static boolean validHost(String h) {
    if (h.isEmpty()) {
      return false;
    }
    if (h.startsWith("[") && h.endsWith("]")) {
      return h.length() > 2;
    }
    for (int i = 0; i < h.length(); i++) {
      char c = h.charAt(i);
      if (!(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_')) {
        return false;
      }
    }
    return true;
  }

  private static boolean validPort(String p) {
    if (p.isEmpty() || p.length() > 5) {
      return false;
    }
    for (int i = 0; i < p.length(); i++) {
      if (p.charAt(i) < '0' || p.charAt(i) > '9') {
        return false;
      }
    }
    int port = Integer.parseInt(p);
    return port >= 1 && port <= 65535;
  }

  private void respond(ChannelHandlerContext ctx, ProxyRequest r, ProxyResponse resp, Throwable err) {
    if (current != r || !ctx.channel().isActive()) {
      if (resp != null) {
        resp.body().discard();
      }
      finish(ctx, r, false);
      return;
    }
    if (err != null) {
      long elapsed = ticker.nanoTime() - r.startNanos;
      Throwable e = Failures.unwrap(err);
      ProxyException pe = e instanceof ProxyException p ? p
          : e instanceof CancellationException ? new ProxyException(503, "request cancelled")
          : new ProxyException(502, "upstream failure", e);
      log.debug("{} {} failed: {}", ctx.channel(), r, pe.getMessage());
      routeMetrics(r).response(pe.status(), elapsed);
      writeError(ctx, r, pe.status(), pe.body());
      return;
    }
    HttpResponse h = resp.head();
    responding = true;
    boolean hasBody = HttpFraming.hasBody(h, r.protocol, r.head.method());
    // Only the answer chosen for the client gets here; its head is ours to rewrite and to send on
    // as it is (an HTTP/1.0 answer is sent as HTTP/1.1, with its framing made explicit below).
    HttpResponse out = h;
    if (h instanceof HttpContent && protocol != HttpProtocol.HTTP_1_1) {
      // A whole response's head, written alone here (its body follows as HTTP/2 DATA); over
      // HTTP/1.1 the whole response goes out as one message (ResponseBody.pipeTo).
      out = new DefaultHttpResponse(HttpVersion.HTTP_1_1, h.status(), h.headers());
    } else if (h.protocolVersion() != HttpVersion.HTTP_1_1) {
      h.setProtocolVersion(HttpVersion.HTTP_1_1);
    }
    HopByHopHeaders.strip(out.headers(), protocol);
    HttpFraming.prepare(out, protocol, hasBody);
    if (!keepAlive) {
      HttpUtil.setKeepAlive(out, false);
    }
    // Request start to response head: the attempt that got the head read the ticker then.
    routeMetrics(r).response(h.status().code(), r.responseHeadNanos - r.startNanos);
    piped = resp.body();
    pipedRequest = r;
    if (protocol == HttpProtocol.HTTP_1_1) {
      piped.pipeTo(ctx.channel(), out, this); // a body read whole goes out with its head
    } else {
      ctx.write(out, ctx.voidPromise()); // a failed write fails the body's last write too
      piped.pipeTo(ctx.channel(), null, this);
    }
  }

  /** The relay of a response body to the client ended ({@link #respond} started it). */
  @Override
  public void ended(ResponseBody body, Throwable e) {
    if (loop.inEventLoop()) {
      bodyEnded(body, e);
    } else {
      loop.execute(() -> bodyEnded(body, e));
    }
  }

  private void bodyEnded(ResponseBody body, Throwable e) {
    // Only the body of the request being answered can end it; an earlier one (its request was
    // ended otherwise, the connection is closing) only closes the connection on an error.
    ProxyRequest r = body == piped ? pipedRequest : null;
    if (r != null) {
      piped = null;
      pipedRequest = null;
    }
    if (e != null) {
      // The head is gone already: closing is the only way left to tell the client.
      log.debug("{} {}: response body failed: {}", ctx.channel(), r, e.toString());
      ctx.close();
    }
    if (r != null) {
      finish(ctx, r, e == null);
    }
  }

  /**
   * The route metrics of {@code r}, looked up only when its authority or route differs from the
   * previous request's: a keep-alive client asks for the same route again and again.
   */
  private SidecarMetrics.RouteMetrics routeMetrics(ProxyRequest r) {
    RouteSnapshot route = r.route;
    if (r.authority != metricsAuthority || route != metricsRoute) {
      routeMetrics = metrics.route(r.authority, route.name());
      metricsAuthority = r.authority;
      metricsRoute = route;
    }
    return routeMetrics;
  }

  private void writeError(ChannelHandlerContext ctx, ProxyRequest r, int status, String text) {
    ByteBuf content = Unpooled.copiedBuffer(text, StandardCharsets.UTF_8);
    FullHttpResponse res = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.valueOf(status), content);
    res.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/plain; charset=utf-8");
    HttpUtil.setContentLength(res, content.readableBytes());
    boolean bodyPending = r != null && r.body.hasBody() && !r.body.isComplete();
    if (!keepAlive || bodyPending) {
      res.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
    }
    ctx.writeAndFlush(res).addListener(ChannelFutureListener.CLOSE_ON_FAILURE);
    if (r != null) {
      finish(ctx, r, true);
    } else if (protocol == HttpProtocol.HTTP_1_1 && keepAlive) {
      ctx.read();
    }
  }

  private void finish(ChannelHandlerContext ctx, ProxyRequest r, boolean ok) {
    if (current != r) {
      return;
    }
    current = null;
    inflight.add(-1);
    boolean bodyDone = !r.body.hasBody() || r.body.isComplete();
    r.body.release();
    if (!ok || !ctx.channel().isActive()) {
      return;
    }
    if (!bodyDone) {
      // The rest of the request body is still on the wire: close the connection (HTTP/1.1, it
      // cannot be reused) or reset the stream (HTTP/2).
      ctx.channel().close();
    } else if (protocol == HttpProtocol.HTTP_1_1 && keepAlive) {
      if (held != null && !held.isEmpty()) {
        drainHeld(ctx);
      } else {
        ctx.read();
      }
    }
  }

  /** Handles what was held back, until a request is in flight again (or nothing is left). */
  private void drainHeld(ChannelHandlerContext ctx) {
    if (draining) {
      return; // a request finished synchronously inside the loop below, which goes on
    }
    draining = true;
    try {
      Object msg;
      while ((msg = held.peek()) != null && (current == null || !(msg instanceof HttpRequest))) {
        held.poll();
        dispatch(ctx, msg);
      }
      dispatchUndispatched(ctx);
      if (current == null && held.isEmpty() && keepAlive && ctx.channel().isActive()) {
        ctx.read();
      }
    } finally {
      draining = false;
    }
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    if (held != null) {
      Object msg;
      while ((msg = held.poll()) != null) {
        ReferenceCountUtil.release(msg);
      }
    }
    undispatched = null;
    ProxyRequest r = current;
    if (r != null) {
      r.cancel();
      finish(ctx, r, false);
    }
    ctx.fireChannelInactive();
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    log.debug("{}: {}", ctx.channel(), cause.toString());
    ctx.close();
  }
}
