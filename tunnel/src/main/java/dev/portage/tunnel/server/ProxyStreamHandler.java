package dev.portage.tunnel.server;

import dev.portage.api.konnectivity.Packet;
import dev.portage.core.time.Ticker;
import dev.portage.tunnel.internal.DirectPacket;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import java.util.concurrent.Executor;

/** Serves {@code ProxyService.Proxy}: one {@link GrpcFrontend} per stream. Thread-safe. */
final class ProxyStreamHandler implements ServerCallHandler<Packet, DirectPacket> {
  private final PacketRouter router;
  private final ServerMetrics metrics;
  private final Ticker ticker;
  private final Executor executor;
  private final long queueBytes;
  private final int queuePackets;
  private final EventLoopGroup loops;

  /**
   * {@code loops} are the frontend listener's event loops (null: none known); {@code executor} runs a
   * frontend whose call was started on another thread.
   */
  ProxyStreamHandler(
      PacketRouter router, ServerMetrics metrics, Ticker ticker, Executor executor, long queueBytes, int queuePackets,
      EventLoopGroup loops) {
    this.loops = loops;
    this.router = router;
    this.metrics = metrics;
    this.ticker = ticker;
    this.executor = executor;
    this.queueBytes = queueBytes;
    this.queuePackets = queuePackets;
  }

  @Override
  public ServerCall.Listener<Packet> startCall(ServerCall<Packet, DirectPacket> call, Metadata headers) {
    // The frontend's serial work runs on its call's own event loop (startCall runs there: the frontend
    // listener uses a direct executor), where the call's cancellation is exact (see GrpcFrontend). The
    // connection sits on an agent stream's loop when one was connected (AgentAffinityGroup): its DIAL_REQ,
    // DATA and credit then reach the stream (and its DIAL_RSP and DATA come back) without a thread hop.
    Executor loop = currentLoop();
    GrpcFrontend f = new GrpcFrontend(
        call, router, metrics, ticker, loop != null ? loop : executor, queueBytes, queuePackets);
    f.start();
    return f;
  }

  /** The loop of {@link #loops} this thread runs, or null (not called on a transport thread). */
  private EventLoop currentLoop() {
    return CurrentLoop.in(loops);
  }
}
