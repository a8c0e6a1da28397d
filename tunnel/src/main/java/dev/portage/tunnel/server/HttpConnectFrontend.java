package dev.portage.tunnel.server;

import com.google.protobuf.ByteString;
import dev.portage.api.konnectivity.DialRequest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import dev.portage.tunnel.internal.FlowControl;
import dev.portage.tunnel.internal.ScratchPayload;
import dev.portage.tunnel.internal.ReceiveCredit;
import dev.portage.tunnel.internal.SendCredit;
import java.util.ArrayDeque;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One HTTP {@code CONNECT} tunnel after its request head: dials through the {@link PacketRouter},
 * answers 200 (or an error status) and then relays raw bytes. Owned by the channel's event loop; the
 * router's callbacks hop onto it.
 *
 * <p>Flow control: {@code AUTO_READ} is off and the socket is read one chunk (at most 256 KiB, one DATA
 * packet) at a time, and again only when the agent stream {@link Backend#isReady() is ready} and, on
 * a stream with negotiated Portage flow control, while this connection has send credit left (else it
 * pauses until the agent's {@code PORTAGE_WINDOW_UPDATE}). Toward the client, DATA goes straight into
 * the channel's outbound buffer, accounted by a {@link ReceiveBudget} and released as writes complete;
 * with flow control the written bytes are granted back to the agent, so the agent pauses this one
 * backend when the client reads slowly. Without it (upstream agents) a client that reads too slowly
 * for its budget gets only this tunnel closed (CLOSE_REQ to the agent, socket closed) and the agent
 * stream keeps flowing for everyone else.
 */
final class HttpConnectFrontend extends ChannelInboundHandlerAdapter implements Frontend {
  private static final String SERVICE_METHOD = ServerMetrics.HTTP_CONNECT;
  static final String NO_TUNNELS = "currently no tunnels available: ";
  private static final int MAX_EARLY_BYTES = 64 * 1024;
  private static final Logger log = LoggerFactory.getLogger(HttpConnectFrontend.class);

  /** Creates frontends with the server's shared collaborators. */
  record Factory(PacketRouter router, ServerMetrics metrics, long queueBytes, int queuePackets) {
    HttpConnectFrontend create(Channel channel, String target, long random) {
      return new HttpConnectFrontend(this, channel, target, random);
    }
  }

  private enum State { PENDING, ESTABLISHED, CLOSING, CLOSED }

  private final Factory f;
  private final Channel channel;
  private final String target;
  private final long random;
  // Replaced once, on the router's thread before it delivers any DATA, when flow control is negotiated.
  private volatile ReceiveBudget budget;
  private SendCredit sendCredit;
  private ReceiveCredit receiveCredit;
  private boolean creditPaused;
  private final ArrayDeque<ByteBuf> early = new ArrayDeque<>();
  private int earlyBytes;
  private State state = State.PENDING;
  private Backend backend;
  private long connectID;
  private boolean backlogged;

  private HttpConnectFrontend(Factory f, Channel channel, String target, long random) {
    this.f = f;
    this.channel = channel;
    this.target = target;
    this.random = random;
    this.budget = new ReceiveBudget(f.queueBytes, f.queuePackets);
  }

  /** The tunnel's client socket. */
  Channel channel() {
    return channel;
  }

  /** Sends the DIAL_REQ; called on the event loop right after the handler is installed. */
  void dial() {
    DialRequest req = DialRequest.newBuilder().setProtocol("tcp").setAddress(target).setRandom(random).build();
    try {
      f.router.dial(this, req);
      log.debug("{}: CONNECT {} pending as dial {}", channel, target, random);
      channel.read();
    } catch (DialRefusedException e) {
      String body = PacketRouter.NO_AGENT.equals(e.getMessage()) ? NO_TUNNELS + e.getMessage() : e.getMessage();
      fail(PacketRouter.NO_AGENT.equals(e.getMessage()) ? 500 : 502, body);
    }
  }

  // ---- router callbacks (any thread) ----

  @Override
  public void dialEstablished(Backend b, long dialRandom, long id) {
    FlowControl flow = b.flowControl();
    if (flow != null) {
      budget = new ReceiveBudget(flow.receiveLimit(), 0);
    }
    channel.eventLoop().execute(() -> {
      if (state != State.PENDING) {
        f.router.closeFromFrontend(b, id, this);
        return;
      }
      state = State.ESTABLISHED;
      backend = b;
      connectID = id;
      if (flow != null) {
        sendCredit = new SendCredit(flow.sendWindow());
        receiveCredit = new ReceiveCredit(flow.receiveWindow());
      }
      channel.writeAndFlush(HttpStatusResponse.established(channel.alloc()));
      for (ByteBuf buf; (buf = early.poll()) != null; ) {
        forward(buf);
      }
      earlyBytes = 0;
      readMore();
    });
  }

  @Override
  public void dialFailed(long dialRandom, String error) {
    channel.eventLoop().execute(() -> {
      if (state == State.PENDING) {
        fail(HttpStatusResponse.statusForDialError(error), error);
      }
    });
  }

  @Override
  public void deliver(ByteString data) {
    deliver(Unpooled.wrappedBuffer(data.asReadOnlyByteBuffer()));
  }

  /**
   * Writes the payload to the client as it is (a direct buffer needs no heap → direct copy in the NIO
   * write); the write releases it when done or failed, and a dropped payload is released at once.
   */
  @Override
  public void deliver(ByteBuf payload) {
    int size = payload.readableBytes();
    ReceiveBudget budget = this.budget;
    if (!budget.tryReserve(size)) {
      payload.release();
      if (budget.overflowed()) {
        channel.eventLoop().execute(this::overflowed);
      }
      return;
    }
    f.metrics.queued(budget.queuedBytes());
    try {
      channel.eventLoop().execute(() -> {
        if (state != State.ESTABLISHED && state != State.CLOSING) {
          budget.release(size);
          payload.release();
          return;
        }
        // A closed channel fails the write (and any queued ones): the listener runs on every path.
        channel.writeAndFlush(payload).addListener(done -> written(budget, size));
        updateBacklog();
      });
    } catch (RejectedExecutionException loopShutDown) {
      budget.release(size);
      payload.release();
    }
  }

  @Override
  public void creditGranted(long bytes) {
    channel.eventLoop().execute(() -> {
      if ((state != State.ESTABLISHED && state != State.CLOSING) || sendCredit == null) {
        return;
      }
      String malformed = sendCredit.grant(bytes);
      if (malformed != null) {
        flowControlViolated("agent " + backend.agentId() + " connectID " + connectID + ": " + malformed);
        return;
      }
      if (creditPaused && sendCredit.available()) {
        setCreditPaused(false);
        if (state == State.ESTABLISHED) {
          readMore();
        }
      }
    });
  }

  @Override
  public void closedByAgent(long id, String error) {
    channel.eventLoop().execute(() -> {
      if (state == State.ESTABLISHED || state == State.CLOSING) {
        state = State.CLOSED;
        log.debug("{}: agent closed connectID {} ({})", channel, id, error);
        // Whatever is queued for the client is flushed before the socket closes.
        channel.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
      }
    });
  }

  // ---- channel events (event loop) ----

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (!(msg instanceof ByteBuf buf)) {
      io.netty.util.ReferenceCountUtil.release(msg); // leftovers of the HTTP codec
      return;
    }
    switch (state) {
      case PENDING -> {
        // Bytes the client sent before the 200; held (bounded, see channelReadComplete) until the tunnel is up.
        earlyBytes += buf.readableBytes();
        early.add(buf);
      }
      case ESTABLISHED -> forward(buf);
      default -> buf.release();
    }
  }

  @Override
  public void channelReadComplete(ChannelHandlerContext ctx) {
    if (state == State.ESTABLISHED) {
      readMore();
    } else if (state == State.PENDING && earlyBytes < MAX_EARLY_BYTES) {
      // Keep reading while the dial is pending so a client that goes away is noticed (and the agent
      // told with DIAL_CLS); stop at the early-bytes bound until the tunnel is up.
      ctx.read();
    }
  }

  @Override
  public void channelWritabilityChanged(ChannelHandlerContext ctx) {
    updateBacklog();
    ctx.fireChannelWritabilityChanged();
  }

  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
    if (evt instanceof ChannelInputShutdownEvent) {
      // Client EOF: ask the agent to close; its CLOSE_RSP closes the socket after pending writes.
      switch (state) {
        case ESTABLISHED -> {
          state = State.CLOSING;
          f.router.forwardCloseRequest(backend, connectID);
        }
        case PENDING -> ctx.close();
        default -> {}
      }
      return;
    }
    ctx.fireUserEventTriggered(evt);
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    switch (state) {
      case PENDING -> f.router.cancelDial(this, random, true);
      case ESTABLISHED, CLOSING -> f.router.closeFromFrontend(backend, connectID, this);
      default -> {}
    }
    state = State.CLOSED;
    releaseEarly();
    if (backlogged) {
      backlogged = false;
      f.metrics.fullReceiveChannel(SERVICE_METHOD, -1);
    }
    setCreditPaused(false);
    ctx.fireChannelInactive();
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    log.debug("{}: tunnel socket error", channel, cause);
    ctx.close();
  }

  // ---- helpers (event loop) ----

  private void forward(ByteBuf buf) {
    try {
      if (sendCredit != null) {
        sendCredit.consume(buf.readableBytes());
      }
      // Backend.send serializes the packet into gRPC's frame buffers before returning, so the payload
      // may live in this thread's scratch array.
      f.router.forwardData(backend, connectID, ScratchPayload.wrap(buf));
    } finally {
      buf.release();
    }
  }

  /** Reads the next chunk now if the agent stream can take it, else when it becomes ready. */
  private void readMore() {
    if (sendCredit != null && !sendCredit.available()) {
      setCreditPaused(true); // the agent's window update resumes reading
      return;
    }
    if (backend.isReady()) {
      channel.read();
    } else {
      backend.whenReady(() -> channel.eventLoop().execute(() -> {
        if (state == State.ESTABLISHED) {
          channel.read();
        }
      }));
    }
  }

  /** A DATA payload left for the client's socket (or was dropped): free its budget, grant credit. */
  private void written(ReceiveBudget b, int size) {
    b.release(size);
    if (receiveCredit != null && (state == State.ESTABLISHED || state == State.CLOSING)) {
      long grant = receiveCredit.written(size);
      if (grant > 0) {
        f.router.grantCredit(backend, connectID, grant);
      }
    }
  }

  private void setCreditPaused(boolean paused) {
    if (paused != creditPaused) {
      creditPaused = paused;
      f.metrics.flowControlPaused(SERVICE_METHOD, paused ? 1 : -1);
    }
  }

  /** The agent broke the credit protocol: close this tunnel alone, loudly. */
  private void flowControlViolated(String why) {
    log.warn("flow control violated, closing this tunnel: {}", why);
    f.metrics.flowControlError();
    f.router.closeFromFrontend(backend, connectID, this);
    state = State.CLOSED;
    setCreditPaused(false);
    channel.close();
  }

  private void overflowed() {
    if (state != State.ESTABLISHED && state != State.CLOSING) {
      return;
    }
    if (sendCredit != null) {
      flowControlViolated("agent " + backend.agentId() + " connectID " + connectID + ": sent "
          + budget.queuedBytes() + " bytes beyond its window (expected: at most the window and one packet)");
      return;
    }
    log.warn("agent {} connectID {}: queue toward the client overflowed ({} bytes); closing this tunnel",
        backend.agentId(), connectID, budget.queuedBytes());
    f.metrics.receiveQueueOverflow(SERVICE_METHOD);
    f.router.closeFromFrontend(backend, connectID, this);
    state = State.CLOSED;
    channel.close();
  }

  private void updateBacklog() {
    boolean now = !channel.isWritable() && channel.isActive();
    if (now != backlogged) {
      backlogged = now;
      f.metrics.fullReceiveChannel(SERVICE_METHOD, now ? 1 : -1);
    }
  }

  private void fail(int status, String body) {
    state = State.CLOSED;
    releaseEarly();
    channel.writeAndFlush(HttpStatusResponse.error(channel.alloc(), status, body))
        .addListener(ChannelFutureListener.CLOSE);
  }

  private void releaseEarly() {
    for (ByteBuf buf; (buf = early.poll()) != null; ) {
      buf.release();
    }
    earlyBytes = 0;
  }
}
