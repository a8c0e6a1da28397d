package dev.portage.bench.tunnel;

import io.grpc.Channel;
import java.io.IOException;

/** One way of reaching the bench backend; each {@link #open()} is a new connection. Thread-safe. */
interface Route {
  /** Row label in the results table. */
  String name();

  Conn open() throws IOException;

  /** Plain TCP to {@code port}: the direct baseline, or the local end of {@code ssh -L}. */
  static Route tcp(String name, int port) {
    return new Route() {
      @Override
      public String name() {
        return name;
      }

      @Override
      public Conn open() throws IOException {
        return SocketConn.connect(port);
      }
    };
  }

  /** HTTP CONNECT through a proxy on {@code proxyPort} to {@code target}. */
  static Route httpConnect(String name, int proxyPort, String target) {
    return new Route() {
      @Override
      public String name() {
        return name;
      }

      @Override
      public Conn open() throws IOException {
        return SocketConn.httpConnect(proxyPort, target);
      }
    };
  }

  /** One konnectivity {@code Proxy} stream per connection, on a shared channel. */
  static Route grpc(String name, Channel channel, String target) {
    return new Route() {
      @Override
      public String name() {
        return name;
      }

      @Override
      public Conn open() throws IOException {
        return GrpcConn.dial(channel, target);
      }
    };
  }
}
