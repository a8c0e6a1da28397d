package dev.portage.tunnel.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.portage.api.konnectivity.AgentServiceGrpc;
import dev.portage.api.konnectivity.Packet;
import dev.portage.api.konnectivity.PacketType;
import dev.portage.tunnel.wire.Metadata;
import io.grpc.ForwardingServerCall;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.netty.NettyServerBuilder;
import io.netty.handler.ssl.SslContext;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Plays the upstream proxy server's role for agent tests: a real gRPC {@code AgentService} on a
 * loopback port that sends {@code serverid}/{@code servercount} response headers before any packet,
 * records what each agent stream sent, and lets the test send packets to the agent.
 */
final class TestProxyServer implements AutoCloseable {
  private static final Duration WAIT = Duration.ofSeconds(10);
  private static final io.grpc.Context.Key<io.grpc.Metadata> REQUEST_HEADERS = io.grpc.Context.key("headers");

  private final Server server;
  private final BlockingQueue<AgentStream> accepted = new LinkedBlockingQueue<>();
  private final List<AgentStream> all = new CopyOnWriteArrayList<>();
  private volatile Supplier<String> serverIds;
  private volatile int serverCount;
  private volatile String flowControlWindow;

  TestProxyServer(String serverId, int serverCount) throws IOException {
    this(() -> serverId, serverCount);
  }

  TestProxyServer(Supplier<String> serverIds, int serverCount) throws IOException {
    this(serverIds, serverCount, 0);
  }

  TestProxyServer(Supplier<String> serverIds, int serverCount, int port) throws IOException {
    this(serverIds, serverCount, port, null);
  }

  /** A server whose agent listener speaks TLS with {@code tls} (upstream's is TLS-only). */
  TestProxyServer(Supplier<String> serverIds, int serverCount, int port, SslContext tls) throws IOException {
    this.serverIds = serverIds;
    this.serverCount = serverCount;
    NettyServerBuilder builder =
        NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", port))
            .addService(ServerInterceptors.intercept(new Service(), new HeaderInterceptor()));
    if (tls != null) {
      builder.sslContext(tls);
    }
    server = builder.build().start();
  }

  int port() {
    return server.getPort();
  }

  void serverCount(int n) {
    serverCount = n;
  }

  /**
   * Answers an agent's {@code portage-flow-control} offer with {@code window} as this server's window
   * (any text, to test bad answers), as a Portage server does; null (the default) answers nothing, as
   * an upstream server does.
   */
  void flowControlWindow(String window) {
    flowControlWindow = window;
  }

  /** Waits for the next agent stream. */
  AgentStream nextStream() throws InterruptedException {
    AgentStream s = accepted.poll(WAIT.toMillis(), TimeUnit.MILLISECONDS);
    assertThat(s).as("an agent stream within " + WAIT).isNotNull();
    return s;
  }

  /** Every stream ever accepted. */
  List<AgentStream> streams() {
    return all;
  }

  @Override
  public void close() throws InterruptedException {
    server.shutdownNow();
    server.awaitTermination(10, TimeUnit.SECONDS);
  }

  /** Sends this server's headers at once, as the upstream server does with {@code SendHeader}. */
  private final class HeaderInterceptor implements ServerInterceptor {
    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(
        ServerCall<Q, R> call, io.grpc.Metadata headers, ServerCallHandler<Q, R> next) {
      io.grpc.Metadata ours = new io.grpc.Metadata();
      ours.put(Metadata.SERVER_ID, serverIds.get());
      ours.put(Metadata.SERVER_COUNT, Integer.toString(serverCount));
      String window = flowControlWindow;
      if (window != null && Metadata.FLOW_CONTROL_V1.equals(headers.get(Metadata.FLOW_CONTROL))) {
        ours.put(Metadata.FLOW_CONTROL, Metadata.FLOW_CONTROL_V1);
        ours.put(Metadata.FLOW_CONTROL_WINDOW, window);
      }
      ServerCall<Q, R> eager =
          new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
            private boolean sent;

            @Override
            public synchronized void sendHeaders(io.grpc.Metadata h) {
              if (!sent) {
                sent = true;
                h.merge(ours);
                super.sendHeaders(h);
              }
            }
          };
      eager.sendHeaders(new io.grpc.Metadata());
      io.grpc.Context ctx = io.grpc.Context.current().withValue(REQUEST_HEADERS, headers);
      return io.grpc.Contexts.interceptCall(ctx, eager, headers, next);
    }
  }

  private final class Service extends AgentServiceGrpc.AgentServiceImplBase {
    @Override
    public StreamObserver<Packet> connect(StreamObserver<Packet> responseObserver) {
      AgentStream s = new AgentStream(REQUEST_HEADERS.get(), (ServerCallStreamObserver<Packet>) responseObserver);
      all.add(s);
      accepted.add(s);
      return s.inbound;
    }
  }

  /** One agent's Connect stream as the server sees it. */
  static final class AgentStream {
    final io.grpc.Metadata headers;
    private final ServerCallStreamObserver<Packet> out;
    private final BlockingQueue<Packet> received = new LinkedBlockingQueue<>();
    private final CompletableFuture<Throwable> ended = new CompletableFuture<>();
    final StreamObserver<Packet> inbound =
        new StreamObserver<>() {
          @Override
          public void onNext(Packet p) {
            received.add(p);
          }

          @Override
          public void onError(Throwable t) {
            ended.complete(t);
          }

          @Override
          public void onCompleted() {
            ended.complete(null);
            synchronized (AgentStream.this) {
              out.onCompleted();
            }
          }
        };

    AgentStream(io.grpc.Metadata headers, ServerCallStreamObserver<Packet> out) {
      this.headers = headers;
      this.out = out;
      out.setOnCancelHandler(() -> ended.complete(new IllegalStateException("cancelled")));
    }

    String header(io.grpc.Metadata.Key<String> key) {
      return headers.get(key);
    }

    synchronized void send(Packet p) {
      out.onNext(p);
    }

    synchronized boolean isReady() {
      return out.isReady();
    }

    /** Ends the stream from the server side. */
    synchronized void complete() {
      out.onCompleted();
    }

    /** The next packet the agent sent, within 10 s. */
    Packet next() throws InterruptedException {
      Packet p = received.poll(WAIT.toMillis(), TimeUnit.MILLISECONDS);
      assertThat(p).as("a packet from the agent within " + WAIT).isNotNull();
      return p;
    }

    /** The next packet, which must be of {@code type}. */
    Packet next(PacketType type) throws InterruptedException {
      Packet p = next();
      assertThat(p.getType()).as("packet " + p).isEqualTo(type);
      return p;
    }

    /** A packet if one arrives within {@code wait}, else null. */
    Packet poll(Duration wait) throws InterruptedException {
      return received.poll(wait.toMillis(), TimeUnit.MILLISECONDS);
    }

    boolean hasEnded() {
      return ended.isDone();
    }

    CompletableFuture<Throwable> ended() {
      return ended;
    }
  }
}
