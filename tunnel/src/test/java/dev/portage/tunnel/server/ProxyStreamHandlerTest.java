package dev.portage.tunnel.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.portage.api.konnectivity.Packet;
import dev.portage.core.time.FakeClock;
import dev.portage.tunnel.internal.DirectPacket;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.Status;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.local.LocalIoHandler;
import io.netty.channel.EventLoop;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class ProxyStreamHandlerTest {
  private final EventLoopGroup loops = new MultiThreadIoEventLoopGroup(2, LocalIoHandler.newFactory());
  private final ExecutorService pool = Executors.newSingleThreadExecutor(r -> new Thread(r, "fallback-pool"));
  private final FakeClock clock = new FakeClock();
  private final ServerMetrics metrics = new ServerMetrics(new PrometheusRegistry());
  private final ProxyStreamHandler handler = new ProxyStreamHandler(
      new PacketRouter(new BackendRegistry(ProxyStrategy.parseList("default"), metrics), new PendingDials(metrics),
          metrics, clock.timeSource(), Duration.ZERO),
      metrics, clock, pool, 1 << 20, 0, loops);

  @AfterEach
  void tearDown() throws Exception {
    loops.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
    pool.shutdownNow();
  }

  /** Records the thread of the frontend's first serial task (it sets the onReady threshold). */
  private static final class RecordingCall extends ServerCall<Packet, DirectPacket> {
    final CompletableFuture<Thread> serialThread = new CompletableFuture<>();

    @Override
    public void setOnReadyThreshold(int numBytes) {
      serialThread.complete(Thread.currentThread());
    }

    @Override
    public void request(int numMessages) {}

    @Override
    public void sendHeaders(Metadata headers) {}

    @Override
    public void sendMessage(DirectPacket message) {}

    @Override
    public void close(Status status, Metadata trailers) {}

    @Override
    public boolean isCancelled() {
      return false;
    }

    @Override
    public MethodDescriptor<Packet, DirectPacket> getMethodDescriptor() {
      return null;
    }
  }

  @Test
  void aFrontendRunsOnTheEventLoopItsCallStartedOn() throws Exception {
    // Its call's cancellation is read on that loop, so a send there never races it (see GrpcFrontend).
    for (int i = 0; i < 4; i++) {
      EventLoop loop = loops.next();
      RecordingCall call = new RecordingCall();
      Thread loopThread = loop.submit(() -> {
        handler.startCall(call, new Metadata());
        return Thread.currentThread();
      }).get(10, TimeUnit.SECONDS);
      assertThat(call.serialThread.get(10, TimeUnit.SECONDS)).isSameAs(loopThread);
    }
  }

  @Test
  void aCallStartedOffTheLoopsRunsOnTheFallbackExecutor() throws Exception {
    RecordingCall call = new RecordingCall();
    handler.startCall(call, new Metadata());
    assertThat(call.serialThread.get(10, TimeUnit.SECONDS).getName()).isEqualTo("fallback-pool");
  }
}
