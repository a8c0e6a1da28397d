package dev.portage.core.admin;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.QueryStringDecoder;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Dispatches aggregated admin requests to the exact-path route table and writes the answer. Shared
 * by every connection of one {@link AdminServer}; routes are immutable, handlers run on the event
 * loop. The request is released by {@link SimpleChannelInboundHandler}.
 */
@ChannelHandler.Sharable
final class AdminHttpHandler extends SimpleChannelInboundHandler<FullHttpRequest> {

  private static final Logger log = LoggerFactory.getLogger(AdminHttpHandler.class);

  /**
   * @param handler serves the path
   * @param readOnly whether only {@code GET} and {@code HEAD} are allowed (the built-ins)
   */
  record Route(AdminHandler handler, boolean readOnly) {}

  private final Map<String, Route> routes;

  AdminHttpHandler(Map<String, Route> routes) {
    this.routes = Map.copyOf(routes);
  }

  @Override
  protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
    if (request.decoderResult().isFailure()) {
      FullHttpResponse response =
          response(
              request,
              AdminResponse.text(
                  400, "bad request: " + request.decoderResult().cause().getMessage() + "\n"));
      response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
      ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
      return;
    }
    ctx.writeAndFlush(response(request, answer(request)));
  }

  private AdminResponse answer(FullHttpRequest request) {
    QueryStringDecoder uri = new QueryStringDecoder(request.uri());
    String path = uri.path();
    Route route = routes.get(path);
    if (route == null) {
      return AdminResponse.text(404, "not found: " + path + "\n");
    }
    HttpMethod method = request.method();
    if (route.readOnly() && !HttpMethod.GET.equals(method) && !HttpMethod.HEAD.equals(method)) {
      AdminResponse refused = AdminResponse.text(405, "method not allowed: " + method + "\n");
      return new AdminResponse(
          refused.status(), refused.contentType(), refused.body(), Map.of("Allow", "GET, HEAD"));
    }
    AdminRequest adminRequest =
        new AdminRequest(method.name(), path, uri.parameters(), request.headers(),
            io.netty.buffer.ByteBufUtil.getBytes(request.content()));
    try {
      AdminResponse response = route.handler().handle(adminRequest);
      if (response == null) {
        throw new IllegalStateException("handler returned null");
      }
      return response;
    } catch (Exception e) {
      log.warn("Admin handler for {} {} failed", method, path, e);
      return AdminResponse.text(500, "internal error: " + e.getMessage() + "\n");
    }
  }

  private static FullHttpResponse response(FullHttpRequest request, AdminResponse answer) {
    boolean head = HttpMethod.HEAD.equals(request.method());
    FullHttpResponse response =
        new DefaultFullHttpResponse(
            request.protocolVersion(),
            HttpResponseStatus.valueOf(answer.status()),
            head ? Unpooled.EMPTY_BUFFER : Unpooled.wrappedBuffer(answer.body()));
    answer.headers().forEach(response.headers()::set);
    response.headers().set(HttpHeaderNames.CONTENT_TYPE, answer.contentType());
    HttpUtil.setContentLength(response, answer.body().length);
    return response;
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    // Resets and broken pipes from scrapers are routine.
    log.debug("Admin connection {} failed", ctx.channel(), cause);
    ctx.close();
  }
}
