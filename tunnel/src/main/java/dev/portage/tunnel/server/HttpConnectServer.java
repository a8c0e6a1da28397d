package dev.portage.tunnel.server;

import dev.portage.core.net.ConnectionLimit;
import dev.portage.core.net.NettyTransport;
import dev.portage.core.time.TimeSource;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import java.util.function.Supplier;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslHandler;
import java.io.IOException;
import java.net.SocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP {@code CONNECT} frontend listener on TCP (optionally TLS) or a Unix domain socket. Each
 * accepted socket gets its own {@link RequestLineCheck} and {@link HttpConnectHandler}. At most {@code
 * maxPendingHeads} sockets may be sending their request head at once (each for at most the header
 * timeout); more are closed at accept, so clients holding partial requests cannot take every file
 * descriptor. Thread-safe; {@link #close()} stops accepting and closes the listener (open tunnels end
 * with the event loop group).
 */
final class HttpConnectServer implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(HttpConnectServer.class);
  /** Largest read from a client socket, sent as one DATA packet (see ServerConnection.MAX_CHUNK on the agent). */
  static final int MAX_CHUNK = 256 * 1024;
  /** Plaintext bytes per TLS engine call on the client's connection: four full 16 KiB records. */
  static final int WRAP_BYTES = 64 * 1024;

  private final Channel listener;
  private final Path udsPath;

  private HttpConnectServer(Channel listener, Path udsPath) {
    this.listener = listener;
    this.udsPath = udsPath;
  }

  /**
   * Binds {@code address} (a TCP address), or the Unix socket {@code udsPath} when it is non-null,
   * replacing an existing socket file if {@code deleteExisting}.
   */
  static HttpConnectServer start(
      EventLoopGroup group, NettyTransport transport, SocketAddress address, Path udsPath, boolean deleteExisting,
      SslContext ssl, HttpConnectFrontend.Factory frontends, TimeSource time, Duration headerTimeout,
      ServerMetrics metrics, Supplier<EventLoop> preferredLoop, int maxPendingHeads) throws IOException {
    ConnectionLimit pendingHeads = new ConnectionLimit(
        "HTTP CONNECT frontend on " + (udsPath != null ? udsPath : address) + " (connections sending their request head)",
        maxPendingHeads);
    ServerBootstrap b = new ServerBootstrap()
        // Each accepted socket goes to its agent stream's loop when there is one (AgentAffinityGroup).
        .group(group, new AgentAffinityGroup(group, preferredLoop))
        // ... and the listener follows them there, so the accept is not a hand-off either.
        .handler(new ListenerAffinity(preferredLoop))
        .childOption(ChannelOption.AUTO_READ, true)
        .childOption(ChannelOption.TCP_NODELAY, true)
        .childOption(ChannelOption.ALLOW_HALF_CLOSURE, true)
        .childOption(ChannelOption.MAX_MESSAGES_PER_READ, 1)
        .childOption(ChannelOption.RCVBUF_ALLOCATOR, new AdaptiveRecvByteBufAllocator(512, 8192, MAX_CHUNK))
        .childHandler(new ChannelInitializer<>() {
          @Override
          protected void initChannel(Channel ch) {
            ConnectionLimit.Admission head = pendingHeads.admit(ch);
            if (head == null) {
              ch.close();
              return;
            }
            metrics.httpConnection(1);
            ch.closeFuture().addListener(f -> metrics.httpConnection(-1));
            if (ssl != null) {
              SslHandler tls = ssl.newHandler(ch.alloc());
              // A payload from the agent is up to MAX_CHUNK bytes; Netty wraps 16 KiB (one record) per
              // engine call, each into its own buffer and socket write entry. BoringSSL writes several
              // records per call, so wrap up to WRAP_BYTES at once: a quarter of the wrap calls,
              // buffer allocations and iovecs per byte, the same records on the wire.
              tls.setWrapDataSize(WRAP_BYTES);
              ch.pipeline().addLast("tls", tls);
            }
            ch.pipeline().addLast("request-line", new RequestLineCheck());
            ch.pipeline().addLast(HttpConnectHandler.CODEC, new HttpServerCodec());
            ch.pipeline().addLast("connect-head", new HttpConnectHandler(frontends, time, headerTimeout, head));
          }
        });
    SocketAddress bindTo;
    if (udsPath != null) {
      if (Files.exists(udsPath)) {
        if (!deleteExisting) {
          throw new IOException("unix socket " + udsPath + " exists (use --delete-existing-uds-file to replace it)");
        }
        Files.delete(udsPath);
      }
      b.channel(transport.serverDomainSocketChannelType());
      bindTo = transport.domainSocketAddress(udsPath);
    } else {
      b.channel(transport.serverChannelType());
      bindTo = address;
    }
    try {
      Channel ch = b.bind(bindTo).sync().channel();
      log.info("HTTP CONNECT frontend listening on {}", ch.localAddress());
      return new HttpConnectServer(ch, udsPath);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while binding " + bindTo, e);
    } catch (Exception e) { // Netty's sync() rethrows the checked BindException undeclared
      throw new IOException("cannot bind HTTP CONNECT frontend to " + bindTo + ": " + e.getMessage(), e);
    }
  }

  SocketAddress localAddress() {
    return listener.localAddress();
  }

  @Override
  public void close() throws IOException {
    listener.close().syncUninterruptibly();
    if (udsPath != null) {
      Files.deleteIfExists(udsPath);
    }
  }
}
