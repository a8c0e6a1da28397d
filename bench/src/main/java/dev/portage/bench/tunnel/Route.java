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

  /**
   * Streams {@code totalBytes} from the backend, split over {@code streams} parallel connections;
   * returns bits per second ({@link Workloads#throughput}).
   */
  default double throughput(long totalBytes, int streams) throws Exception {
    return Workloads.throughput(this, totalBytes, streams);
  }

  /** {@code n} sequential connect + 1-byte echo round trips; sorted latencies in ns ({@link Workloads#dialLatencies}). */
  default long[] dialLatencies(int n) throws IOException {
    return Workloads.dialLatencies(this, n);
  }

  /** Opens one connection of a route. */
  @FunctionalInterface
  interface Opener {
    Conn open() throws IOException;
  }

  /** A route labelled {@code name} whose connections come from {@code opener}. */
  static Route of(String name, Opener opener) {
    return new Opened(name, opener);
  }

  /** {@link #of}'s route: the harness opens each connection. */
  record Opened(String name, Opener opener) implements Route {
    @Override
    public Conn open() throws IOException {
      return opener.open();
    }
  }

  /**
   * The grpc-go client process {@code client} (one connection to a gRPC frontend, a Proxy stream per
   * dial): it measures throughput and dials itself; the harness cannot {@link #open()} its connections.
   */
  static Route grpcGo(String name, GoClient client) {
    return new InGoClient(name, client);
  }

  /** {@link #grpcGo}'s route: the Go process measures; the harness only asks. */
  record InGoClient(String name, GoClient client) implements Route {
    @Override
    public Conn open() throws IOException {
      throw new IOException(name + ": the grpc-go client's connections live in its own process");
    }

    @Override
    public double throughput(long totalBytes, int streams) throws IOException {
      return client.throughput(totalBytes, streams);
    }

    @Override
    public long[] dialLatencies(int n) throws IOException {
      return client.dialLatencies(n);
    }
  }

  /**
   * A route whose dial is one {@code GET /} to an HTTP server ({@link Workloads#getLatencies}) instead
   * of the bench backend's 1-byte echo; it has no throughput workload.
   */
  static Route get(String name, Opener opener) {
    return new Getting(name, opener);
  }

  /** {@link #get}'s route. */
  record Getting(String name, Opener opener) implements Route {
    @Override
    public Conn open() throws IOException {
      return opener.open();
    }

    @Override
    public double throughput(long totalBytes, int streams) throws IOException {
      throw new IOException(name + ": a GET route has no throughput workload");
    }

    @Override
    public long[] dialLatencies(int n) throws IOException {
      return Workloads.getLatencies(this, n);
    }
  }

  /** Plain TCP to {@code port}: the direct baseline, or the local end of {@code ssh -L}. */
  static Route tcp(String name, int port) {
    return of(name, () -> SocketConn.connect(port));
  }

  /** HTTP CONNECT through a TLS proxy on {@code proxyPort} to {@code target}, connecting with {@code tls}. */
  static Route httpConnectTls(String name, TlsConn.Client tls, int proxyPort, String target) {
    return of(name, () -> SocketConn.tunnel(tls.connect(proxyPort), target));
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
