package dev.portage.tunnel.server;

import com.google.protobuf.ByteString;
import dev.portage.api.konnectivity.CloseResponse;
import dev.portage.api.konnectivity.Data;
import dev.portage.api.konnectivity.DialRequest;
import dev.portage.api.konnectivity.DialResponse;
import dev.portage.api.konnectivity.Packet;
import dev.portage.api.konnectivity.PacketType;
import dev.portage.core.time.Ticker;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.Status;
import dev.portage.tunnel.internal.DirectPacket;
import dev.portage.tunnel.internal.FlowControl;
import dev.portage.tunnel.internal.ReceiveCredit;
import dev.portage.tunnel.internal.SendCredit;
import java.util.ArrayDeque;
import java.util.concurrent.Executor;
import io.netty.buffer.ByteBuf;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One {@code ProxyService.Proxy} stream: one tunneled connection. All state lives on a {@link
 * SerialExecutor}; gRPC callbacks and the router's callbacks are both posted there. It runs on the event
 * loop of its own call's transport (which {@link AgentAffinityGroup} places on an agent stream's loop
 * when one is connected, so packets to and from that agent need no thread hop). On that thread the
 * call's cancellation is seen at once: a send after {@link ServerCall#isCancelled()} said false reaches
 * a stream the transport still holds, and gRPC frees its frame whatever happens to the stream next (see
 * {@link #sendUnreleased}).
 *
 * <p>Flow control: the stream is read with manual {@code request(1)}, and the next packet is requested
 * only when the agent stream {@link Backend#isReady() is ready} and, on a stream with negotiated
 * Portage flow control, while this connection has send credit left (else after the agent's {@code
 * PORTAGE_WINDOW_UPDATE}), so a fast client cannot grow the agent's buffer or its queue toward the
 * backend. Toward the client, DATA waits in this connection's own queue until the client's stream is
 * {@code isReady()}; that queue is bounded by a {@link ReceiveBudget}. With flow control, DATA handed
 * to the client's stream is granted back to the agent, so the agent pauses this one backend when the
 * client reads slowly. Without it (upstream agents) a connection whose queue overflows is closed alone
 * (CLOSE_REQ to the agent, CLOSE_RSP with an error to the client) instead of stalling the agent stream.
 */
final class GrpcFrontend extends ServerCall.Listener<Packet> implements Frontend {
  private static final Logger log = LoggerFactory.getLogger(GrpcFrontend.class);

  private static final int READY_THRESHOLD = 128 * 1024;

  private enum State { IDLE, PENDING, ESTABLISHED, CLOSED }

  private final ServerCall<Packet, DirectPacket> call;
  private final PacketRouter router;
  private final ServerMetrics metrics;
  private final Ticker ticker;
  private final SerialExecutor serial;
  // Replaced once, on the router's thread before it delivers any DATA, when flow control is negotiated.
  private volatile ReceiveBudget budget;
  private SendCredit sendCredit;
  private ReceiveCredit receiveCredit;
  private boolean creditPaused;
  private final ArrayDeque<DirectPacket> outbound = new ArrayDeque<>();
  private State state = State.IDLE;
  private long random;
  private Backend backend;
  private long connectID;
  private boolean backlogged;
  private boolean finishAfterFlush;
  private boolean headersSent;

  GrpcFrontend(
      ServerCall<Packet, DirectPacket> call, PacketRouter router, ServerMetrics metrics, Ticker ticker,
      Executor executor, long queueBytes, int queuePackets) {
    this.call = call;
    this.router = router;
    this.metrics = metrics;
    this.ticker = ticker;
    this.serial = new SerialExecutor(executor);
    this.budget = new ReceiveBudget(queueBytes, queuePackets);
  }

  /** Called once from startCall. */
  void start() {
    metrics.grpcConnection(ServerMetrics.PROXY, 1);
    // Above gRPC's 32 KiB default, so a fast client is not fed stop-and-wait, one DATA chunk at a time.
    serial.execute(() -> call.setOnReadyThreshold(READY_THRESHOLD));
    call.request(1);
  }

  // ---- gRPC callbacks (call's executor) ----

  @Override
  public void onMessage(Packet p) {
    serial.execute(() -> handle(p));
  }

  @Override
  public void onHalfClose() {
    serial.execute(() -> frontendGone(true));
  }

  @Override
  public void onCancel() {
    // The client cancelled (or its connection broke): upstream's Recv fails with Canceled and counts it.
    metrics.streamError(ServerMetrics.FROM_CLIENT, Status.Code.CANCELLED, null);
    serial.execute(() -> frontendGone(false));
  }

  @Override
  public void onReady() {
    serial.execute(this::flush);
  }

  // ---- router callbacks (any thread) ----

  @Override
  public void dialEstablished(Backend b, long dialRandom, long id) {
    FlowControl flow = b.flowControl();
    if (flow != null) {
      budget = new ReceiveBudget(flow.receiveLimit(), 0);
    }
    serial.execute(() -> {
      if (state != State.PENDING || random != dialRandom) {
        // The client gave up (DIAL_CLS or stream end) while the agent was dialing.
        router.closeFromFrontend(b, id, this);
        return;
      }
      state = State.ESTABLISHED;
      backend = b;
      connectID = id;
      if (flow != null) {
        sendCredit = new SendCredit(flow.sendWindow());
        receiveCredit = new ReceiveCredit(flow.receiveWindow());
      }
      send(Packet.newBuilder()
          .setType(PacketType.DIAL_RSP)
          .setDialResponse(DialResponse.newBuilder().setRandom(dialRandom).setConnectID(id))
          .build());
    });
  }

  @Override
  public void dialFailed(long dialRandom, String error) {
    serial.execute(() -> {
      if (state != State.PENDING || random != dialRandom) {
        return;
      }
      send(dialError(dialRandom, error));
      finish(Status.OK);
    });
  }

  @Override
  public void deliver(ByteString data) {
    enqueue(data.size(), data, null);
  }

  /** Queues the payload as it is; it is released once gRPC framed it, or when it is dropped. */
  @Override
  public void deliver(ByteBuf payload) {
    enqueue(payload.readableBytes(), null, payload);
  }

  /** Queues DATA for the client, from {@code data} or (taken over) {@code payload}. */
  private void enqueue(int size, ByteString data, ByteBuf payload) {
    ReceiveBudget budget = this.budget;
    if (!budget.tryReserve(size)) {
      release(payload);
      if (budget.overflowed()) {
        serial.execute(this::overflowed);
      }
      return;
    }
    metrics.queued(budget.queuedBytes());
    serial.execute(new SerialExecutor.Abandonable() {
      @Override
      public void run() {
        if (state != State.ESTABLISHED) {
          abandon();
          return;
        }
        outbound.add(payload != null ? DirectPacket.data(connectID, payload) : new DirectPacket(Packet.newBuilder()
            .setType(PacketType.DATA)
            .setData(Data.newBuilder().setConnectID(connectID).setData(data))
            .build(), null));
        flush();
      }

      @Override
      public void abandon() {
        budget.release(size);
        release(payload);
      }
    });
  }

  private static void release(ByteBuf payload) {
    if (payload != null) {
      payload.release();
    }
  }

  @Override
  public void creditGranted(long bytes) {
    serial.execute(() -> {
      if (state != State.ESTABLISHED || sendCredit == null) {
        return;
      }
      String malformed = sendCredit.grant(bytes);
      if (malformed != null) {
        flowControlViolated("agent " + backend.agentId() + " connectID " + connectID + ": " + malformed);
        return;
      }
      if (creditPaused && sendCredit.available()) {
        setCreditPaused(false);
        requestWhenAgentReady();
      }
    });
  }

  @Override
  public void closedByAgent(long id, String error) {
    serial.execute(() -> {
      if (state != State.ESTABLISHED || id != connectID) {
        return;
      }
      CloseResponse.Builder rsp = CloseResponse.newBuilder().setConnectID(id);
      if (error != null && !error.isEmpty()) {
        rsp.setError(error);
      }
      // Queued DATA goes first; the stream ends once the CLOSE_RSP is out.
      outbound.add(new DirectPacket(Packet.newBuilder().setType(PacketType.CLOSE_RSP).setCloseResponse(rsp).build(), null));
      finishAfterFlush = true;
      flush();
    });
  }

  // ---- serial executor ----

  private void handle(Packet p) {
    metrics.packet(ServerMetrics.FROM_CLIENT, p.getType());
    boolean requestNext = true;
    switch (p.getType()) {
      case DIAL_REQ -> dial(p.getDialRequest());
      case DATA -> requestNext = data(p.getData());
      case CLOSE_REQ -> {
        if (state == State.ESTABLISHED && p.getCloseRequest().getConnectID() == connectID) {
          router.forwardCloseRequest(backend, connectID);
        } else {
          send(closeResponse(p.getCloseRequest().getConnectID(), "backend not initialized"));
        }
      }
      case DIAL_CLS -> {
        if (state == State.PENDING && p.getCloseDial().getRandom() == random) {
          router.cancelDial(this, random, false);
          state = State.IDLE;
        }
      }
      default -> log.debug("Proxy stream: unexpected {} ignored", p.getType());
    }
    if (state == State.CLOSED) {
      return;
    }
    if (requestNext) {
      call.request(1);
    }
  }

  private void dial(DialRequest req) {
    if (state != State.IDLE) {
      send(dialError(req.getRandom(), "this stream already carries a dial"));
      return;
    }
    try {
      router.dial(this, req);
      state = State.PENDING;
      random = req.getRandom();
    } catch (DialRefusedException e) {
      send(dialError(req.getRandom(), e.getMessage()));
      finish(Status.OK);
    }
  }

  /** Returns whether the next packet may be requested right away. */
  private boolean data(Data d) {
    if (state != State.ESTABLISHED) {
      send(closeResponse(d.getConnectID(), "backend not initialized"));
      return true;
    }
    if (d.getConnectID() != connectID) {
      router.closeFromFrontend(backend, connectID, this);
      send(closeResponse(connectID,
          "DATA for connectID " + d.getConnectID() + " on a stream established as connectID " + connectID));
      finish(Status.OK);
      return false;
    }
    router.forwardData(backend, connectID, d.getData());
    if (sendCredit != null) {
      sendCredit.consume(d.getData().size());
      if (!sendCredit.available()) {
        setCreditPaused(true); // the agent's window update requests the next packet
        return false;
      }
    }
    if (backend.isReady()) {
      return true;
    }
    backend.whenReady(() -> call.request(1));
    return false;
  }

  private void requestWhenAgentReady() {
    if (backend.isReady()) {
      call.request(1);
    } else {
      backend.whenReady(() -> call.request(1));
    }
  }

  private void setCreditPaused(boolean paused) {
    if (paused != creditPaused) {
      creditPaused = paused;
      metrics.flowControlPaused(ServerMetrics.PROXY, paused ? 1 : -1);
    }
  }

  /** The agent broke the credit protocol: close this connection alone, with the reason for the client. */
  private void flowControlViolated(String why) {
    log.warn("flow control violated, closing this connection: {}", why);
    metrics.flowControlError();
    router.closeFromFrontend(backend, connectID, this);
    dropQueued();
    send(closeResponse(connectID, "flow control violated: " + why));
    finish(Status.OK);
  }

  private void frontendGone(boolean halfClose) {
    switch (state) {
      case PENDING -> router.cancelDial(this, random, true);
      case ESTABLISHED -> router.closeFromFrontend(backend, connectID, this);
      default -> {}
    }
    finish(halfClose ? Status.OK : null);
  }

  private void overflowed() {
    if (state != State.ESTABLISHED) {
      return;
    }
    if (sendCredit != null) {
      flowControlViolated("agent " + backend.agentId() + " connectID " + connectID + ": sent "
          + budget.queuedBytes() + " bytes beyond its window (expected: at most the window and one packet)");
      return;
    }
    log.warn("agent {} connectID {}: queue toward the client overflowed ({} bytes); closing this connection",
        backend.agentId(), connectID, budget.queuedBytes());
    metrics.receiveQueueOverflow(ServerMetrics.PROXY);
    router.closeFromFrontend(backend, connectID, this);
    dropQueued();
    send(closeResponse(connectID, "receive queue overflow: the client reads too slowly"));
    finish(Status.OK);
  }

  private void flush() {
    while (state != State.CLOSED && !outbound.isEmpty() && call.isReady()) {
      DirectPacket p = outbound.poll();
      int size = p.dataSize();
      send(p);
      if (p.packet().getType() == PacketType.DATA) {
        budget.release(size);
        long grant = receiveCredit == null ? 0 : receiveCredit.written(size);
        if (grant > 0) {
          router.grantCredit(backend, connectID, grant);
        }
      }
    }
    boolean nowBacklogged = !outbound.isEmpty() && state != State.CLOSED;
    if (nowBacklogged != backlogged) {
      backlogged = nowBacklogged;
      metrics.fullReceiveChannel(ServerMetrics.PROXY, nowBacklogged ? 1 : -1);
    }
    if (finishAfterFlush && outbound.isEmpty()) {
      finish(Status.OK);
    }
  }

  private void send(Packet p) {
    send(new DirectPacket(p, null));
  }

  /** Sends {@code d} and releases its payload (gRPC has framed it when sendMessage returns). */
  private void send(DirectPacket d) {
    try {
      sendUnreleased(d);
    } finally {
      d.release();
    }
  }

  private void sendUnreleased(DirectPacket d) {
    Packet p = d.packet();
    if (state == State.CLOSED || call.isCancelled()) {
      // The onCancel callback that closes this stream may still be queued here; nothing more to send.
      // This check is exact only on the call's own event loop (ProxyStreamHandler puts us there): the
      // transport marks the call cancelled on that thread when a reset or the connection's end is read,
      // and the loop closes every connection (cancelling their calls) before it refuses tasks. From any
      // other thread the call could be cancelled, and its loop stopped, between this check and gRPC's
      // write: the frame gRPC built would then wait forever in its write queue, never released.
      return;
    }
    long start = ticker.nanoTime();
    try {
      if (!headersSent) {
        // With the first packet, not at stream start: both then leave in one write (one wake-up of the
        // client less per dial). Nothing is waiting for them before (the spec asks only that they come
        // before the first packet); a stream that ends without a packet gets a trailers-only response.
        headersSent = true;
        call.sendHeaders(new Metadata());
      }
      call.sendMessage(d);
    } catch (RuntimeException e) {
      metrics.streamError(ServerMetrics.TO_CLIENT, Status.fromThrowable(e).getCode(), p.getType());
      log.debug("Proxy stream: send {} failed", p.getType(), e);
      return;
    }
    metrics.frontendWrite(ticker.nanoTime() - start);
    metrics.packet(ServerMetrics.TO_CLIENT, p.getType());
  }

  /** Drops what waits for the client: frees its budget and releases its payloads. */
  private void dropQueued() {
    for (DirectPacket p; (p = outbound.poll()) != null; ) {
      if (p.packet().getType() == PacketType.DATA) {
        budget.release(p.dataSize());
      }
      p.release();
    }
  }

  /** Ends the stream once; a null status means the client already cancelled it. */
  private void finish(Status status) {
    if (state == State.CLOSED) {
      return;
    }
    state = State.CLOSED;
    dropQueued();
    if (backlogged) {
      backlogged = false;
      metrics.fullReceiveChannel(ServerMetrics.PROXY, -1);
    }
    setCreditPaused(false);
    metrics.grpcConnection(ServerMetrics.PROXY, -1);
    if (status != null && !call.isCancelled()) {
      try {
        call.close(status, new Metadata());
      } catch (IllegalStateException alreadyClosed) {
        // cancelled concurrently by the client
      }
    }
  }

  private static Packet dialError(long random, String error) {
    return Packet.newBuilder()
        .setType(PacketType.DIAL_RSP)
        .setDialResponse(DialResponse.newBuilder().setRandom(random).setError(error))
        .build();
  }

  private static Packet closeResponse(long connectID, String error) {
    return Packet.newBuilder()
        .setType(PacketType.CLOSE_RSP)
        .setCloseResponse(CloseResponse.newBuilder().setConnectID(connectID).setError(error))
        .build();
  }
}
