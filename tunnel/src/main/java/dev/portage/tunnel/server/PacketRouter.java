package dev.portage.tunnel.server;

import com.google.protobuf.ByteString;
import dev.portage.api.konnectivity.CloseDial;
import dev.portage.api.konnectivity.CloseRequest;
import dev.portage.api.konnectivity.CloseResponse;
import dev.portage.api.konnectivity.Data;
import dev.portage.api.konnectivity.DialRequest;
import dev.portage.api.konnectivity.DialResponse;
import dev.portage.api.konnectivity.Packet;
import dev.portage.api.konnectivity.PacketType;
import dev.portage.api.konnectivity.WindowUpdate;
import dev.portage.core.time.TimeSource;
import dev.portage.tunnel.server.ServerMetrics.DialFailure;
import dev.portage.tunnel.wire.HostPort;
import io.netty.buffer.ByteBuf;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves packets between frontends and agent streams and owns the two maps of live tunnels: pending
 * dials (by random) and established connections (per agent stream, by connectID). Every map change
 * happens here, so each lifecycle event (answer, DIAL_CLS, timeout, close, stream loss) removes an
 * entry exactly once. Thread-safe; never blocks: agent packets are handed to frontends, which queue
 * them on their own executors.
 */
final class PacketRouter {
  static final String NO_AGENT = "No agent available";
  private static final Logger log = LoggerFactory.getLogger(PacketRouter.class);

  private final BackendRegistry backends;
  private final PendingDials pending;
  private final ServerMetrics metrics;
  private final TimeSource time;
  private final Duration dialTimeout;

  PacketRouter(
      BackendRegistry backends, PendingDials pending, ServerMetrics metrics, TimeSource time, Duration dialTimeout) {
    this.backends = backends;
    this.pending = pending;
    this.metrics = metrics;
    this.time = time;
    this.dialTimeout = dialTimeout;
  }

  BackendRegistry backends() {
    return backends;
  }

  PendingDials pending() {
    return pending;
  }

  /** Established connections over all agent streams. */
  int establishedCount() {
    int n = 0;
    for (Backend b : backends.all()) {
      n += b.connections().size();
    }
    return n;
  }

  // ---- frontend side ----

  /**
   * Picks an agent, files the dial as pending and forwards the DIAL_REQ; the answer arrives later
   * through {@link Frontend#dialEstablished} or {@link Frontend#dialFailed}.
   */
  Backend dial(Frontend frontend, DialRequest req) throws DialRefusedException {
    Backend backend = backends.pick(HostPort.host(req.getAddress()));
    if (backend == null) {
      metrics.dialFailure(DialFailure.NO_AGENT);
      throw new DialRefusedException(NO_AGENT);
    }
    PendingDial d = new PendingDial(req.getRandom(), req.getAddress(), frontend, backend, time.ticker().nanoTime());
    if (!pending.add(d)) {
      throw new DialRefusedException("dial random " + req.getRandom() + " is already pending");
    }
    if (!dialTimeout.isZero()) {
      d.timer(time.scheduler().schedule(() -> dialTimedOut(d), dialTimeout.toNanos(), TimeUnit.NANOSECONDS));
    }
    log.debug("dial {} => {} via {}", req.getRandom(), req.getAddress(), backend);
    Packet packet = Packet.newBuilder().setType(PacketType.DIAL_REQ).setDialRequest(req).build();
    if (!backend.send(packet) && pending.remove(d)) {
      d.cancelTimer();
      metrics.dialFailure(DialFailure.BACKEND_CLOSE);
      throw new DialRefusedException("agent " + backend.agentId() + " disconnected before the dial was sent");
    }
    return backend;
  }

  /** The frontend gave up on its pending dial; with {@code tellAgent} the agent gets DIAL_CLS. */
  void cancelDial(Frontend frontend, long random, boolean tellAgent) {
    PendingDial d = pending.remove(random, frontend);
    if (d == null) {
      return;
    }
    d.cancelTimer();
    metrics.dialFailure(DialFailure.FRONTEND_CLOSE);
    if (tellAgent) {
      d.backend.send(closeDial(random));
    }
  }

  /** Sends DATA to the agent; {@code data} may be a {@link dev.portage.tunnel.internal.ScratchPayload}: it is serialized before this returns. */
  void forwardData(Backend backend, long connectID, ByteString data) {
    backend.send(Packet.newBuilder()
        .setType(PacketType.DATA)
        .setData(Data.newBuilder().setConnectID(connectID).setData(data))
        .build());
  }

  /** Grants the agent {@code bytes} more credit for {@code connectID} (negotiated flow control only). */
  void grantCredit(Backend backend, long connectID, long bytes) {
    backend.send(Packet.newBuilder()
        .setType(PacketType.PORTAGE_WINDOW_UPDATE)
        .setWindowUpdate(WindowUpdate.newBuilder().setConnectID(connectID).setBytes(bytes))
        .build());
  }

  /** Forwards the frontend's CLOSE_REQ; the entry stays until the agent's CLOSE_RSP. */
  void forwardCloseRequest(Backend backend, long connectID) {
    backend.send(closeRequest(connectID));
  }

  /** The frontend is gone: forget the connection now and ask the agent to close it. */
  void closeFromFrontend(Backend backend, long connectID, Frontend frontend) {
    if (backend.connections().remove(connectID, frontend)) {
      metrics.established(-1);
    }
    backend.send(closeRequest(connectID));
  }

  // ---- agent side ----

  void onAgentPacket(Backend backend, Packet p) {
    onAgentPacket(backend, p, null);
  }

  /**
   * Routes {@code p}; a DATA packet's payload is {@code payload} when that is non-null (then the packet's
   * own data field is empty, see {@link dev.portage.tunnel.internal.DirectPacket}). Takes {@code payload}
   * over: a frontend gets it, or it is released before this returns (also when routing throws).
   */
  void onAgentPacket(Backend backend, Packet p, ByteBuf payload) {
    Frontend receiver = null;
    try {
      receiver = route(backend, p, payload == null ? p.getData().getData().size() : payload.readableBytes());
    } finally {
      if (receiver == null && payload != null) {
        payload.release();
      }
    }
    if (receiver == null) {
      return;
    }
    if (payload != null) {
      receiver.deliver(payload); // releases it on every path
    } else {
      receiver.deliver(p.getData().getData());
    }
  }

  /** Handles {@code p}; for DATA of a live connection returns its frontend (to deliver to), else null. */
  private Frontend route(Backend backend, Packet p, int dataSize) {
    metrics.packet(ServerMetrics.FROM_AGENT, p.getType());
    switch (p.getType()) {
      case DIAL_RSP -> onDialResponse(backend, p.getDialResponse());
      case DATA -> {
        Data data = p.getData();
        backend.countReceived(dataSize);
        Frontend f = backend.connections().get(data.getConnectID());
        if (f == null) {
          log.debug("{}: DATA for unknown connectID {} dropped", backend, data.getConnectID());
          return null;
        }
        return f;
      }
      case CLOSE_RSP -> {
        CloseResponse rsp = p.getCloseResponse();
        Frontend f = backend.connections().remove(rsp.getConnectID());
        if (f == null) {
          log.debug("{}: CLOSE_RSP for unknown connectID {}", backend, rsp.getConnectID());
          return null;
        }
        metrics.established(-1);
        f.closedByAgent(rsp.getConnectID(), rsp.getError());
      }
      case DIAL_CLS -> {
        PendingDial d = pending.remove(p.getCloseDial().getRandom(), backend);
        if (d != null) {
          d.cancelTimer();
          metrics.dialFailure(DialFailure.BACKEND_CLOSE);
          d.frontend.dialFailed(d.random, "dial closed by agent " + backend.agentId());
        }
      }
      case PORTAGE_WINDOW_UPDATE -> {
        WindowUpdate u = p.getWindowUpdate();
        if (backend.flowControl() == null) {
          log.debug("{}: window update without negotiated flow control ignored", backend);
          return null;
        }
        Frontend f = backend.connections().get(u.getConnectID());
        if (f == null) {
          // Normal after a close: the agent granted credit for bytes written just before it.
          log.debug("{}: window update for unknown connectID {} ignored", backend, u.getConnectID());
          return null;
        }
        f.creditGranted(u.getBytes());
      }
      case DRAIN -> {
        log.info("agent {} is draining; new dials prefer other agents", backend.agentId());
        backend.markDraining();
        backends.refresh();
      }
      default -> log.debug("{}: unexpected {} ignored", backend, p.getType());
    }
    return null;
  }

  private void onDialResponse(Backend backend, DialResponse rsp) {
    PendingDial d = pending.remove(rsp.getRandom(), backend);
    if (d == null) {
      metrics.dialFailure(DialFailure.UNRECOGNIZED_RESPONSE);
      log.debug("{}: DIAL_RSP for unknown random {} (connectID {})", backend, rsp.getRandom(), rsp.getConnectID());
      if (rsp.getConnectID() != 0) {
        backend.send(closeRequest(rsp.getConnectID()));
      }
      return;
    }
    d.cancelTimer();
    if (!rsp.getError().isEmpty() || rsp.getConnectID() == 0) {
      metrics.dialFailure(DialFailure.ERROR_RESPONSE);
      String error = rsp.getError().isEmpty() ? "agent answered the dial without a connectID" : rsp.getError();
      d.frontend.dialFailed(d.random, error);
      return;
    }
    Frontend previous = backend.connections().putIfAbsent(rsp.getConnectID(), d.frontend);
    if (previous != null) {
      log.warn("{}: connectID {} answered twice; refusing the second dial", backend, rsp.getConnectID());
      metrics.dialFailure(DialFailure.ERROR_RESPONSE);
      d.frontend.dialFailed(d.random, "agent reused connectID " + rsp.getConnectID());
      return;
    }
    metrics.dialDuration(time.ticker().nanoTime() - d.startNanos); // successful dials only, as upstream
    metrics.established(1);
    d.frontend.dialEstablished(backend, d.random, rsp.getConnectID());
  }

  /** The agent stream ended: fail its pending dials now and close every connection it carried. */
  void agentGone(Backend backend, String reason) {
    backend.markClosed();
    backends.remove(backend);
    for (PendingDial d : pending.removeAll(backend)) {
      d.cancelTimer();
      metrics.dialFailure(DialFailure.BACKEND_CLOSE);
      d.frontend.dialFailed(d.random, "agent " + backend.agentId() + " disconnected before answering the dial: " + reason);
    }
    for (Map.Entry<Long, Frontend> e : backend.connections().entrySet()) {
      if (backend.connections().remove(e.getKey(), e.getValue())) {
        metrics.established(-1);
        e.getValue().closedByAgent(e.getKey(), "agent " + backend.agentId() + " disconnected");
      }
    }
  }

  private void dialTimedOut(PendingDial d) {
    if (!pending.remove(d)) {
      return;
    }
    metrics.dialFailure(DialFailure.BACKEND_DIAL_TIMEOUT);
    d.backend.send(closeDial(d.random));
    d.frontend.dialFailed(d.random,
        "dial timeout: agent " + d.backend.agentId() + " did not answer the dial to " + d.address + " within " + dialTimeout);
  }

  static Packet closeRequest(long connectID) {
    return Packet.newBuilder()
        .setType(PacketType.CLOSE_REQ)
        .setCloseRequest(CloseRequest.newBuilder().setConnectID(connectID))
        .build();
  }

  static Packet closeDial(long random) {
    return Packet.newBuilder()
        .setType(PacketType.DIAL_CLS)
        .setCloseDial(CloseDial.newBuilder().setRandom(random))
        .build();
  }
}
