package dev.portage.tunnel.server;

import dev.portage.api.konnectivity.Packet;
import dev.portage.tunnel.internal.FlowControl;
import dev.portage.tunnel.internal.DirectPacket;
import dev.portage.tunnel.wire.AgentIdentifiers;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.Status;
import io.grpc.StatusException;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves {@code AgentService.Connect}: checks {@code agentid}/{@code agentidentifiers} (and token auth),
 * sends the {@code serverid}/{@code servercount} response headers at once, registers the stream as a
 * {@link Backend} and feeds its packets to the {@link PacketRouter}. The receive path never blocks on a
 * frontend: it asks for the next message as soon as one is routed. Thread-safe.
 */
final class AgentStreamHandler implements ServerCallHandler<DirectPacket, Packet> {
  private static final Logger log = LoggerFactory.getLogger(AgentStreamHandler.class);

  static final int STREAM_READY_THRESHOLD = 1 << 20;

  private final String serverId;
  private final int serverCount;
  private final PacketRouter router;
  private final AgentAuthenticator authenticator;
  private final ServerMetrics metrics;
  private final long flowControlWindow;
  private final EventLoopGroup loops;

  /**
   * The agent listener runs on {@code loops} with a direct executor, so {@link #startCall} runs on the
   * stream's own loop and records it in the {@link Backend}; a TokenReview decided later continues on
   * that loop too.
   */
  AgentStreamHandler(
      String serverId, int serverCount, PacketRouter router, AgentAuthenticator authenticator, ServerMetrics metrics,
      long flowControlWindow, EventLoopGroup loops) {
    this.flowControlWindow = flowControlWindow;
    this.loops = loops;
    this.serverId = serverId;
    this.serverCount = serverCount;
    this.router = router;
    this.authenticator = authenticator;
    this.metrics = metrics;
  }

  @Override
  public ServerCall.Listener<DirectPacket> startCall(ServerCall<DirectPacket, Packet> call, Metadata headers) {
    String agentId;
    AgentIdentifiers identifiers;
    try {
      agentId = single(headers, dev.portage.tunnel.wire.Metadata.AGENT_ID, true);
      identifiers = identifiers(headers);
    } catch (StatusException e) {
      refuse(call, e.getStatus());
      return new ServerCall.Listener<>() {};
    }
    EventLoop loop = currentLoop();
    CompletableFuture<Void> auth = authenticator.authenticate(agentId, headers);
    if (auth.isDone()) {
      Status refusal = refusal(auth);
      if (refusal != null) {
        refuse(call, refusal);
        return new ServerCall.Listener<>() {};
      }
      return admit(call, headers, agentId, identifiers, loop);
    }
    // A TokenReview is in progress: answer on the stream's own thread once it is decided. Nothing is
    // requested from the agent until then.
    Deferred deferred = new Deferred();
    auth.whenCompleteAsync((ok, failure) -> {
      if (deferred.gone) {
        return; // the agent went away while waiting
      }
      Status refusal = refusal(auth);
      if (refusal != null) {
        refuse(call, refusal);
        return;
      }
      deferred.admitted(admit(call, headers, agentId, identifiers, loop));
    }, loop != null ? loop : Runnable::run); // no loop: a transport without one; answer where decided
    return deferred;
  }

  private static Status refusal(CompletableFuture<Void> decided) {
    try {
      decided.join();
      return null;
    } catch (CompletionException e) {
      Throwable cause = e.getCause();
      return cause instanceof StatusException se ? se.getStatus()
          : Status.INTERNAL.withDescription("agent authentication failed: " + cause).withCause(cause);
    } catch (java.util.concurrent.CancellationException e) {
      return Status.CANCELLED.withDescription("agent authentication cancelled");
    }
  }

  private void refuse(ServerCall<DirectPacket, Packet> call, Status status) {
    if (status.getCode() == Status.Code.UNAVAILABLE) {
      log.debug("agent connection refused: {}", status.getDescription()); // overload: logged once where it is
    } else {
      log.warn("agent connection refused: {}", status.getDescription());
    }
    metrics.streamError(ServerMetrics.FROM_AGENT, status.getCode(), null);
    call.close(status, new Metadata());
  }

  /** Sends the response headers, registers the agent's stream and starts reading it. */
  private ServerCall.Listener<DirectPacket> admit(ServerCall<DirectPacket, Packet> call, Metadata headers,
      String agentId, AgentIdentifiers identifiers, EventLoop loop) {
    Metadata response = new Metadata();
    response.put(dev.portage.tunnel.wire.Metadata.SERVER_ID, serverId);
    response.put(dev.portage.tunnel.wire.Metadata.SERVER_COUNT, Integer.toString(serverCount));
    FlowControl flow = negotiateFlowControl(agentId, headers);
    if (flow != null) {
      response.put(dev.portage.tunnel.wire.Metadata.FLOW_CONTROL, dev.portage.tunnel.wire.Metadata.FLOW_CONTROL_V1);
      response.put(dev.portage.tunnel.wire.Metadata.FLOW_CONTROL_WINDOW, Long.toString(flow.receiveWindow()));
    }
    call.sendHeaders(response);
    // gRPC's default isReady() threshold (32 KiB, one DATA chunk) makes frontends read stop-and-wait;
    // per-connection credit bounds each connection, so the shared stream may buffer more.
    call.setOnReadyThreshold(STREAM_READY_THRESHOLD);

    Backend backend = new Backend(agentId, identifiers, call, metrics, flow, loop);
    if (flow != null) {
      metrics.flowControlStream(1);
    }
    router.backends().add(backend);
    metrics.grpcConnection(ServerMetrics.CONNECT, 1);
    log.info("agent {} connected (identifiers: {}, flow control: {})", agentId, identifiers.encode(),
        flow == null ? "off, overflow rule" : "window " + flow.sendWindow() + " to agent, " + flow.receiveWindow() + " from agent");
    call.request(1);
    return new Listener(call, backend);
  }

  /**
   * The listener of a stream whose agent is still being authenticated: remembers that the agent went
   * away (nothing to undo: nothing was registered yet) or half-closed, and hands over to the real
   * listener once admitted. Runs on the stream's thread, as the completion of the check does.
   */
  private static final class Deferred extends ServerCall.Listener<DirectPacket> {
    private ServerCall.Listener<DirectPacket> delegate;
    private boolean gone;
    private boolean halfClosed;

    void admitted(ServerCall.Listener<DirectPacket> listener) {
      delegate = listener;
      if (halfClosed) {
        listener.onHalfClose();
      }
    }

    @Override
    public void onMessage(DirectPacket message) {
      if (delegate != null) {
        delegate.onMessage(message);
      } else {
        message.release(); // not requested before admission; never expected
      }
    }

    @Override
    public void onHalfClose() {
      if (delegate != null) {
        delegate.onHalfClose();
      } else {
        halfClosed = true;
      }
    }

    @Override
    public void onCancel() {
      gone = true;
      if (delegate != null) {
        delegate.onCancel();
      }
    }

    @Override
    public void onComplete() {
      gone = true;
      if (delegate != null) {
        delegate.onComplete();
      }
    }

    @Override
    public void onReady() {
      if (delegate != null) {
        delegate.onReady();
      }
    }
  }

  /** The loop of {@link #loops} this thread runs, or null. */
  private EventLoop currentLoop() {
    return CurrentLoop.in(loops);
  }

  /**
   * Portage flow control when this server has it on and the agent offered version 1 with a valid
   * window; otherwise null (upstream agents never offer it; a malformed offer falls back too, with a
   * WARN, since the agent only uses flow control once the server answered it).
   */
  private FlowControl negotiateFlowControl(String agentId, Metadata headers) {
    String offer = headers.get(dev.portage.tunnel.wire.Metadata.FLOW_CONTROL);
    if (flowControlWindow <= 0 || !dev.portage.tunnel.wire.Metadata.FLOW_CONTROL_V1.equals(offer)) {
      return null;
    }
    try {
      long agentWindow = FlowControl.parseWindow(
          headers.get(dev.portage.tunnel.wire.Metadata.FLOW_CONTROL_WINDOW), TunnelServerConfig.MAX_FLOW_CONTROL_WINDOW);
      return new FlowControl(agentWindow, flowControlWindow);
    } catch (IllegalArgumentException e) {
      log.warn("agent {} offered flow control with a bad window, using the overflow rule: {}", agentId, e.getMessage());
      return null;
    }
  }

  private static String single(Metadata headers, Metadata.Key<String> key, boolean required) throws StatusException {
    Iterable<String> values = headers.getAll(key);
    List<String> list = new ArrayList<>();
    if (values != null) {
      values.forEach(list::add);
    }
    if (list.size() > 1 || (required && list.isEmpty())) {
      throw Status.INVALID_ARGUMENT
          .withDescription("expected " + (required ? "exactly" : "at most") + " one " + key.name()
              + " header, got " + list.size())
          .asException();
    }
    return list.isEmpty() ? null : list.get(0);
  }

  private static AgentIdentifiers identifiers(Metadata headers) throws StatusException {
    String raw = single(headers, dev.portage.tunnel.wire.Metadata.AGENT_IDENTIFIERS, false);
    try {
      return AgentIdentifiers.parse(raw);
    } catch (IllegalArgumentException e) {
      throw Status.INVALID_ARGUMENT.withDescription(e.getMessage()).asException();
    }
  }

  private final class Listener extends ServerCall.Listener<DirectPacket> {
    private final ServerCall<DirectPacket, Packet> call;
    private final Backend backend;
    private boolean gone;

    Listener(ServerCall<DirectPacket, Packet> call, Backend backend) {
      this.call = call;
      this.backend = backend;
    }

    @Override
    public void onMessage(DirectPacket received) {
      // gRPC parsed it on this thread just now; the router takes its payload buffer over.
      router.onAgentPacket(backend, received.packet(), received.payload());
      call.request(1);
    }

    @Override
    public void onReady() {
      backend.onReady();
    }

    @Override
    public void onHalfClose() {
      backend.close(Status.OK);
      gone("agent closed the stream");
    }

    @Override
    public void onCancel() {
      // The agent went away (cancelled, or its connection broke): upstream's Recv fails and counts it.
      metrics.streamError(ServerMetrics.FROM_AGENT, Status.Code.CANCELLED, null);
      gone("stream cancelled");
    }

    @Override
    public void onComplete() {
      gone("stream completed");
    }

    private void gone(String reason) {
      if (gone) {
        return;
      }
      gone = true;
      log.info("agent {} disconnected: {}", backend.agentId(), reason);
      metrics.grpcConnection(ServerMetrics.CONNECT, -1);
      if (backend.flowControl() != null) {
        metrics.flowControlStream(-1);
      }
      router.agentGone(backend, reason);
    }
  }
}
