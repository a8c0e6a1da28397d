package dev.portage.bench.tunnel;

import io.grpc.Channel;
import io.grpc.ManagedChannel;
import java.io.IOException;
import java.util.concurrent.Executor;
import java.util.function.Supplier;

/** One way of reaching the bench backend; each {@link #open()} is a new connection. Thread-safe. */
interface Route {
  /** Row label in the results table. */
  String name();

  Conn open() throws IOException;

  /** Opens one connection of a route. */
  @FunctionalInterface
  interface Opener {
    Conn open() throws IOException;
  }

  /** A route labelled {@code name} whose connections come from {@code opener}. */
  static Route of(String name, Opener opener) {
    return new Route() {
      @Override
      public String name() {
        return name;
      }

      @Override
      public Conn open() throws IOException {
        return opener.open();
      }
    };
  }

  /** Plain TCP to {@code port}: the direct baseline, or the local end of {@code ssh -L}. */
  static Route tcp(String name, int port) {
    return of(name, () -> SocketConn.connect(port));
  }

  /** HTTP CONNECT through a proxy on {@code proxyPort} to {@code target}. */
  static Route httpConnect(String name, int proxyPort, String target) {
    return of(name, () -> SocketConn.httpConnect(proxyPort, target));
  }

  /**
   * One konnectivity {@code Proxy} stream per connection, all on one shared channel whose transport
   * thread is {@code transport}.
   */
  static Route grpc(String name, Channel channel, Executor transport, String target) {
    return of(name, () -> GrpcConn.dial(channel, transport, target, () -> {}));
  }

  /**
   * A new channel (TCP connection, HTTP/2 handshake) per connection, closed with it: what upstream's
   * konnectivity-client does ({@code CreateSingleUseGrpcTunnel}), so every dial also pays the
   * connection setup, as an HTTP CONNECT dial does. {@code channels} builds them; {@code transport} is
   * their (shared) transport thread.
   */
  static Route grpcSingleUse(String name, Supplier<ManagedChannel> channels, Executor transport, String target) {
    return of(name, () -> {
      ManagedChannel channel = channels.get();
      try {
        return GrpcConn.dial(channel, transport, target, channel::shutdown);
      } catch (IOException | RuntimeException e) {
        channel.shutdownNow();
        throw e;
      }
    });
  }
}
