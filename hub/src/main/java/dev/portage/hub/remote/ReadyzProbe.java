package dev.portage.hub.remote;

import dev.portage.core.balance.Endpoint;
import dev.portage.core.health.HealthProbe;
import dev.portage.core.http.HttpClientPool;
import dev.portage.core.http.HttpProtocol;
import dev.portage.core.http.HttpStream;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoopGroup;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Health check of one API server: {@code GET /readyz} over the hub's client pool (with its TLS
 * client certificate). Any answer below 500 passes: a 401/403/404 still proves the server is up and
 * reachable, while a not-ready apiserver answers 500. Non-blocking; the stage is cancellable.
 */
final class ReadyzProbe implements HealthProbe<ApiServer> {

  private final HttpClientPool pool;
  private final EventLoopGroup group;
  private final String path;

  ReadyzProbe(HttpClientPool pool, EventLoopGroup group, String path) {
    this.pool = pool;
    this.group = group;
    this.path = path;
  }

  @Override
  public CompletionStage<Boolean> probe(Endpoint<ApiServer> endpoint) {
    ApiServer server = endpoint.target();
    CompletableFuture<Boolean> result = new CompletableFuture<>();
    pool.acquire(server.address(), HttpProtocol.HTTP_1_1, group.next())
        .whenComplete((stream, error) -> {
          if (error != null) {
            result.completeExceptionally(error);
            return;
          }
          if (result.isDone()) { // cancelled by the prober's timeout meanwhile
            stream.release();
            return;
          }
          result.whenComplete((ok, e) -> {
            if (!stream.isEnded()) {
              stream.abort();
            }
          });
          stream.attach(new Reader(stream, result));
          FullHttpRequest req = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, path);
          req.headers().set(HttpHeaderNames.HOST, server.hostHeader())
              .set(HttpHeaderNames.USER_AGENT, "portage-hub")
              .set(HttpHeaderNames.ACCEPT, "*/*")
              .setInt(HttpHeaderNames.CONTENT_LENGTH, 0);
          stream.channel().writeAndFlush(req).addListener(f -> {
            if (f.isSuccess()) {
              stream.channel().read();
            } else {
              result.completeExceptionally(f.cause());
            }
          });
        });
    return result;
  }

  /** Reads the probe's response to its end, so the connection can go back to the pool. */
  private static final class Reader extends ChannelInboundHandlerAdapter {
    private final HttpStream stream;
    private final CompletableFuture<Boolean> result;
    private int status;

    Reader(HttpStream stream, CompletableFuture<Boolean> result) {
      this.stream = stream;
      this.result = result;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      try {
        if (msg instanceof HttpResponse r) {
          status = r.status().code();
        }
        if (msg instanceof LastHttpContent) {
          stream.release();
          result.complete(status > 0 && status < 500);
        }
      } finally {
        ReferenceCountUtil.release(msg);
      }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
      if (!stream.isEnded()) {
        ctx.channel().read();
      }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      result.completeExceptionally(new java.io.IOException("connection closed during probe"));
      ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      result.completeExceptionally(cause);
      stream.abort();
    }
  }
}
