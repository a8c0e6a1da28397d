package dev.portage.tunnel.server;

import dev.portage.api.konnectivity.Packet;
import dev.portage.tunnel.internal.FlowControl;
import dev.portage.tunnel.wire.AgentIdentifiers;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.Status;
import io.netty.channel.EventLoop;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.LongAdder;

/**
 * One agent stream ({@code AgentService.Connect} call) and the connections established over it, keyed
 * by the agent's connectID. Thread-safe: {@link #send} may be called from any frontend's thread (a lock
 * keeps the call's single-writer contract; {@code sendMessage} serializes the packet into gRPC's frame buffers and never blocks); readers
 * wait for {@link #isReady()} through {@link #whenReady} instead of growing gRPC's buffer.
 */
final class Backend {
  private final String agentId;
  private final AgentIdentifiers identifiers;
  private final ServerCall<?, Packet> call;
  private final ServerMetrics metrics;
  private final FlowControl flowControl;
  private final EventLoop eventLoop;
  private final Map<Long, Frontend> connections = new ConcurrentHashMap<>();
  private final Queue<Runnable> readyWaiters = new ConcurrentLinkedQueue<>();
  private final LongAdder bytesToAgent = new LongAdder();
  private final LongAdder bytesFromAgent = new LongAdder();
  private volatile boolean draining;
  private volatile boolean closed;

  Backend(
      String agentId, AgentIdentifiers identifiers, ServerCall<?, Packet> call, ServerMetrics metrics,
      FlowControl flowControl, EventLoop eventLoop) {
    this.agentId = agentId;
    this.eventLoop = eventLoop;
    this.flowControl = flowControl;
    this.identifiers = identifiers;
    this.call = call;
    this.metrics = metrics;
  }

  String agentId() {
    return agentId;
  }

  AgentIdentifiers identifiers() {
    return identifiers;
  }

  /** The credit windows negotiated on this stream, or null when the agent gets the overflow rule. */
  FlowControl flowControl() {
    return flowControl;
  }

  /**
   * The event loop this stream's transport runs on when it is one of the server's own loops (agent
   * listener without token auth), else null. Frontends placed on it reach the stream without a
   * cross-thread hand-off.
   */
  EventLoop eventLoop() {
    return eventLoop;
  }

  boolean draining() {
    return draining;
  }

  void markDraining() {
    draining = true;
  }

  boolean closed() {
    return closed;
  }

  Map<Long, Frontend> connections() {
    return connections;
  }

  /** Sends to the agent; false when the stream is already closed or the send failed. */
  boolean send(Packet packet) {
    synchronized (this) {
      if (closed) {
        return false;
      }
      if (packet.hasData()) {
        // Counted before the send so the agent can never see bytes the dashboard does not.
        bytesToAgent.add(packet.getData().getData().size());
      }
      try {
        call.sendMessage(packet);
      } catch (RuntimeException e) {
        // The transport went away under us; the listener's onCancel cleans up.
        metrics.streamError(ServerMetrics.TO_AGENT, Status.fromThrowable(e).getCode(), packet.getType());
        return false;
      }
    }
    metrics.packet(ServerMetrics.TO_AGENT, packet.getType());
    return true;
  }

  /** Counts DATA payload bytes received from the agent on this stream (the dashboard shows them). */
  void countReceived(int bytes) {
    bytesFromAgent.add(bytes);
  }

  /** DATA payload bytes sent to the agent on this stream. */
  long bytesToAgent() {
    return bytesToAgent.sum();
  }

  /** DATA payload bytes received from the agent on this stream. */
  long bytesFromAgent() {
    return bytesFromAgent.sum();
  }

  /** True while gRPC's outbound buffer toward the agent is below its threshold. */
  boolean isReady() {
    return !closed && call.isReady();
  }

  /**
   * Runs {@code resume} (on the caller's or the transport's thread) once the stream is ready or closed.
   * Each waiting connection registers once, so the waiter queue is bounded by the connection count.
   */
  void whenReady(Runnable resume) {
    readyWaiters.add(resume);
    if (isReady() || closed) {
      runWaiters();
    }
  }

  /** gRPC's onReady: wake every connection waiting to read from its frontend. */
  void onReady() {
    runWaiters();
  }

  /** Ends the agent call with {@code status} (idempotent) and wakes all waiters. */
  void close(Status status) {
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      try {
        call.close(status, new Metadata());
      } catch (IllegalStateException alreadyClosed) {
        // The client cancelled first; nothing left to tell it.
      }
    }
    runWaiters();
  }

  /** The stream ended from the agent's side: no more sends, wake all waiters. */
  void markClosed() {
    synchronized (this) {
      closed = true;
    }
    runWaiters();
  }

  private void runWaiters() {
    Runnable r;
    while ((isReady() || closed) && (r = readyWaiters.poll()) != null) {
      r.run();
    }
  }

  @Override
  public String toString() {
    return "agent " + agentId;
  }
}
