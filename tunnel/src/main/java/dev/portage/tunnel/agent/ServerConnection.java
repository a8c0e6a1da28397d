package dev.portage.tunnel.agent;

import dev.portage.api.konnectivity.AgentServiceGrpc;
import dev.portage.api.konnectivity.CloseDial;
import dev.portage.api.konnectivity.CloseRequest;
import dev.portage.api.konnectivity.CloseResponse;
import dev.portage.api.konnectivity.Data;
import dev.portage.api.konnectivity.DialRequest;
import dev.portage.api.konnectivity.DialResponse;
import dev.portage.api.konnectivity.Drain;
import dev.portage.api.konnectivity.Packet;
import dev.portage.api.konnectivity.PacketType;
import dev.portage.api.konnectivity.WindowUpdate;
import dev.portage.tunnel.internal.FlowControl;
import dev.portage.tunnel.internal.PacketMarshaller;
import dev.portage.tunnel.internal.ScratchPayload;
import dev.portage.tunnel.wire.Metadata;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.netty.NettyChannelBuilder;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One {@code AgentService.Connect} stream to one proxy server (upstream calls it Client): its own gRPC
 * channel (so a load balancer in front of the servers can send it to another replica), the backend
 * sockets dialed on the server's behalf, and the packets between them.
 *
 * <h2>Flow control</h2>
 * One stream carries every connection's bytes, and one slow connection must not stall the others
 * (upstream issues #180, #881). With a Portage server that answers the {@code portage-flow-control}
 * offer, each connection has credit windows both ways ({@code PORTAGE_WINDOW_UPDATE}):
 * <ul>
 *   <li>backend → server: a backend socket is read (auto-read off, one chunk of at most {@value
 *       #MAX_CHUNK} bytes) only while the gRPC stream {@code isReady()} and the connection has credit;
 *       out of credit it pauses until the server, having written the bytes to its client, grants more.
 *   <li>server → backend: payloads queue per connection and are granted back as the socket takes them,
 *       so the server pauses reading that one client when the backend is slow. Nothing is closed.
 * </ul>
 * With an upstream server (no answer to the offer, or {@code flowControlWindow} 0) the fallback is the
 * overflow rule: reads still wait for {@code isReady()}, and each connection queues at most {@code
 * --xfr-channel-size} packets toward its backend; a connection whose queue overflows is closed alone
 * (socket closed, {@code CLOSE_RSP{connectID, error}} sent), counted in {@code
 * agent_endpoint_queue_overflow_total}.
 *
 * <p>Threading: the gRPC transport, the call's callbacks and every backend socket of this connection
 * run on one event loop, which owns all mutable state; public methods hop onto it. The maps are
 * concurrent only so that other threads can read their sizes.
 */
final class ServerConnection {
  private static final Logger log = LoggerFactory.getLogger(ServerConnection.class);

  /**
   * Largest DATA payload read from a backend. Each packet costs an event-loop round and a gRPC frame on
   * both ends, so bulk transfers want large ones; 256 KiB stays far under the 4 MiB message limit
   * every gRPC peer (upstream's Go server included) accepts by default.
   */
  static final int MAX_CHUNK = 256 * 1024;

  /** Bytes gRPC may buffer on the stream before {@code isReady()} turns false. */
  static final int STREAM_READY_THRESHOLD = 1 << 20;

  /** HTTP/2 window of the stream (gRPC's default is 1 MiB); credit bounds each connection within it. */
  static final int STREAM_WINDOW = 8 << 20;

  /** {@code AgentService.Connect} with {@link PacketMarshaller}: one copy less per received DATA payload. */
  private static final MethodDescriptor<Packet, Packet> CONNECT = PacketMarshaller.of(AgentServiceGrpc.getConnectMethod());

  private final AgentContext ctx;
  private final EventLoop loop;
  private final ManagedChannel channel;
  private final ClientCall<Packet, Packet> call;
  private final Consumer<ServerConnection> onClosed;
  private final Bootstrap bootstrap;
  private final CompletableFuture<ServerConnection> connected = new CompletableFuture<>();
  private final CompletableFuture<Void> closed = new CompletableFuture<>();
  private final Map<Long, BackendConnection> backends = new ConcurrentHashMap<>();
  private final Map<Long, PendingDial> pendingDials = new ConcurrentHashMap<>();
  private final ArrayDeque<BackendConnection> waitingForReady = new ArrayDeque<>();

  private volatile FlowControl flow;
  private volatile String serverId;
  private volatile int serverCount;
  private volatile boolean streamOpen;
  private boolean shutdown;
  private boolean drainRequested;
  private boolean drainSent;
  private long lastConnectId;

  private ServerConnection(
      AgentContext ctx, EventLoop loop, ManagedChannel channel, Consumer<ServerConnection> onClosed) {
    this.ctx = ctx;
    this.loop = loop;
    this.channel = channel;
    this.onClosed = onClosed;
    // gRPC's default isReady() threshold (32 KiB, one DATA chunk) makes backends read stop-and-wait.
    this.call = channel.newCall(CONNECT,
        CallOptions.DEFAULT.withExecutor(loop).withOnReadyThreshold(STREAM_READY_THRESHOLD));
    long connectTimeoutMillis = Math.min(Integer.MAX_VALUE, ctx.config().dialTimeout().toMillis() * 2);
    this.bootstrap =
        new Bootstrap()
            .group(loop)
            .channel(ctx.channelType())
            .option(ChannelOption.AUTO_READ, false)
            .option(ChannelOption.TCP_NODELAY, true)
            // Our own timer (injected scheduler) enforces the dial timeout; Netty's is a backstop.
            .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) connectTimeoutMillis)
            .option(ChannelOption.RCVBUF_ALLOCATOR, new AdaptiveRecvByteBufAllocator(512, 8192, MAX_CHUNK))
            .handler(
                new ChannelInitializer<Channel>() {
                  @Override
                  protected void initChannel(Channel ch) {}
                });
  }

  /**
   * Opens a new gRPC channel and starts {@code Connect} with this agent's metadata. The service
   * account token, when configured, is read now: it is re-read on every connect because Kubernetes
   * rotates it. {@link #connected()} completes once the server's response headers arrived.
   */
  static ServerConnection open(AgentContext ctx, Consumer<ServerConnection> onClosed) throws IOException {
    TunnelAgentConfig cfg = ctx.config();
    io.grpc.Metadata headers = new io.grpc.Metadata();
    headers.put(Metadata.AGENT_ID, cfg.agentId());
    if (!cfg.agentIdentifiers().isEmpty()) {
      headers.put(Metadata.AGENT_IDENTIFIERS, cfg.agentIdentifiers());
    }
    if (cfg.serviceAccountTokenPath() != null) {
      // Token files have no meaningful surrounding whitespace; a trailing newline is not a valid header.
      String token = Files.readString(cfg.serviceAccountTokenPath()).strip();
      headers.put(Metadata.AUTHORIZATION, "Bearer " + token);
    }
    if (cfg.flowControl()) {
      headers.put(Metadata.FLOW_CONTROL, Metadata.FLOW_CONTROL_V1);
      headers.put(Metadata.FLOW_CONTROL_WINDOW, Long.toString(cfg.flowControlWindow()));
    }
    EventLoop loop = ctx.group().next();
    NettyChannelBuilder builder =
        NettyChannelBuilder.forAddress(cfg.proxyServerHost(), cfg.proxyServerPort())
            .eventLoopGroup(loop)
            .channelType(ctx.channelType())
            .executor(loop)
            .flowControlWindow(STREAM_WINDOW)
            // Whole DATA packets per read (Netty's default stops at 64 KiB) for uploads toward backends.
            .withOption(ChannelOption.RCVBUF_ALLOCATOR, new AdaptiveRecvByteBufAllocator(512, 8192, MAX_CHUNK + 1024))
            // Netty's adaptive pool, which the backend sockets use too, instead of grpc-netty's private
            // PooledByteBufAllocator: one pool for the agent's buffers (docs/benchmarks-tunnel.md).
            .withOption(ChannelOption.ALLOCATOR, ByteBufAllocator.DEFAULT)
            // A Connect stream is never replayed, and retry buffering would hold DATA payloads (which
            // live in a reused scratch array, see onBackendData) past sendMessage.
            .disableRetry()
            .keepAliveTime(cfg.keepaliveTime().toNanos(), TimeUnit.NANOSECONDS);
    if (ctx.sslContext() != null) {
      builder.sslContext(ctx.sslContext());
    } else {
      builder.usePlaintext();
    }
    ManagedChannel channel = builder.build();
    ServerConnection conn = new ServerConnection(ctx, loop, channel, onClosed);
    conn.onLoop(() -> conn.start(headers));
    return conn;
  }

  /** Completes with this connection once the server's {@code serverid}/{@code servercount} arrived. */
  CompletableFuture<ServerConnection> connected() {
    return connected;
  }

  /** Completes when this connection and all its backend sockets are closed. */
  CompletableFuture<Void> closedFuture() {
    return closed;
  }

  /** The server's ID from the response headers; null before they arrived. */
  String serverId() {
    return serverId;
  }

  /** The server's {@code servercount} from the response headers; 0 before they arrived. */
  int serverCount() {
    return serverCount;
  }

  /** Backend connections currently established (connectID → socket). */
  int openEndpointConnections() {
    return backends.size();
  }

  /** Dials in flight. */
  int pendingDials() {
    return pendingDials.size();
  }

  /**
   * False once the stream ended or the channel is in TRANSIENT_FAILURE or SHUTDOWN; the probe drops
   * such connections. Thread-safe.
   */
  boolean isReady() {
    if (!streamOpen) {
      return false;
    }
    ConnectivityState state = channel.getState(false);
    return state != ConnectivityState.TRANSIENT_FAILURE && state != ConnectivityState.SHUTDOWN;
  }

  /** Sends DRAIN now if connected, or as soon as the headers arrive. Thread-safe. */
  void drain() {
    onLoop(() -> {
      drainRequested = true;
      maybeSendDrain();
    });
  }

  /** Ends the stream, closes every backend socket and the channel. Thread-safe; idempotent. */
  CompletableFuture<Void> close() {
    onLoop(() -> {
      if (streamOpen) {
        streamOpen = false;
        call.cancel("agent closed the connection", null);
      }
      shutdown(Status.CANCELLED.withDescription("closed by agent"));
    });
    return closed;
  }

  private void onLoop(Runnable task) {
    try {
      loop.execute(task);
    } catch (RejectedExecutionException e) {
      // The event loops are gone (agent shutting down): nothing is left to clean up on them.
      channel.shutdownNow();
      connected.completeExceptionally(e);
      closed.complete(null);
    }
  }

  private void start(io.grpc.Metadata headers) {
    streamOpen = true;
    call.start(new Listener(), headers);
    call.request(1);
  }

  private final class Listener extends ClientCall.Listener<Packet> {
    @Override
    public void onHeaders(io.grpc.Metadata headers) {
      String id = single(headers.getAll(Metadata.SERVER_ID));
      String count = single(headers.getAll(Metadata.SERVER_COUNT));
      if (id == null || count == null) {
        failHandshake("expected one serverid and one servercount header, got serverid="
            + headers.getAll(Metadata.SERVER_ID) + " servercount=" + headers.getAll(Metadata.SERVER_COUNT));
        return;
      }
      int n;
      try {
        n = Integer.parseInt(count);
      } catch (NumberFormatException e) {
        n = -1;
      }
      if (n < 0) {
        failHandshake("servercount: " + count + " (expected: a decimal integer >= 0)");
        return;
      }
      if (ctx.config().flowControl() && Metadata.FLOW_CONTROL_V1.equals(headers.get(Metadata.FLOW_CONTROL))) {
        try {
          long serverWindow = FlowControl.parseWindow(
              headers.get(Metadata.FLOW_CONTROL_WINDOW), TunnelAgentConfig.MAX_FLOW_CONTROL_WINDOW);
          flow = new FlowControl(serverWindow, ctx.config().flowControlWindow());
        } catch (IllegalArgumentException e) {
          // The server will wait for credit we cannot compute: this stream cannot work.
          failHandshake("the server accepted flow control with a bad window: " + e.getMessage());
          return;
        }
        ctx.metrics().flowControlConnection(1);
      }
      serverId = id;
      serverCount = n;
      log.info("Connected to proxy server {} at {}:{} (servercount {}, flow control {})",
          id, ctx.config().proxyServerHost(), ctx.config().proxyServerPort(), n,
          flow == null ? "off: overflow rule" : "on");
      connected.complete(ServerConnection.this);
      maybeSendDrain();
    }

    @Override
    public void onMessage(Packet packet) {
      ctx.metrics().packetReceived(packet.getType());
      handle(packet);
      if (streamOpen) {
        call.request(1);
      }
    }

    @Override
    public void onReady() {
      readWaitingBackends();
    }

    @Override
    public void onClose(Status status, io.grpc.Metadata trailers) {
      boolean wasOpen = streamOpen;
      streamOpen = false;
      if (wasOpen && !status.isOk()) {
        ctx.metrics().receiveError(status);
      }
      if (serverId != null) {
        log.info("Stream to proxy server {} ended: {} {}", serverId, status.getCode(),
            status.getDescription() == null ? "" : status.getDescription());
      }
      shutdown(status);
    }
  }

  private static String single(Iterable<String> values) {
    if (values == null) {
      return null;
    }
    Iterator<String> it = values.iterator();
    String first = it.hasNext() ? it.next() : null;
    return it.hasNext() ? null : first;
  }

  private void failHandshake(String reason) {
    log.warn("Proxy server at {}:{} sent bad response headers: {}",
        ctx.config().proxyServerHost(), ctx.config().proxyServerPort(), reason);
    connected.completeExceptionally(Status.INTERNAL.withDescription(reason).asRuntimeException());
    streamOpen = false;
    call.cancel(reason, null);
  }

  private void maybeSendDrain() {
    if (drainRequested && !drainSent && serverId != null && streamOpen) {
      drainSent = true;
      log.info("Sending DRAIN to proxy server {}", serverId);
      send(Packet.newBuilder().setType(PacketType.DRAIN).setDrain(Drain.getDefaultInstance()).build());
    }
  }

  private void handle(Packet packet) {
    switch (packet.getType()) {
      case DIAL_REQ -> onDialRequest(packet.getDialRequest());
      case DATA -> onData(packet.getData());
      case CLOSE_REQ -> onCloseRequest(packet.getCloseRequest());
      case DIAL_CLS -> onCloseDial(packet.getCloseDial());
      case PORTAGE_WINDOW_UPDATE -> onWindowUpdate(packet.getWindowUpdate());
      default -> log.debug("Ignoring {} packet from server {}", packet.getType(), serverId);
    }
  }

  // ---- dial ----

  private void onDialRequest(DialRequest req) {
    long random = req.getRandom();
    String address = req.getAddress();
    log.debug("DIAL_REQ {} => {} from server {}", random, address, serverId);
    String protocol = req.getProtocol();
    if (!protocol.equals("tcp") && !protocol.equals("tcp4") && !protocol.equals("tcp6")) {
      dialFailed(random, "dial " + protocol + " " + address + ": unknown network " + protocol,
          AgentMetrics.DialFailure.UNKNOWN);
      return;
    }
    if (pendingDials.containsKey(random)) {
      dialFailed(random, "dial " + random + " to " + address + ": a dial with this random is in progress",
          AgentMetrics.DialFailure.UNKNOWN);
      return;
    }
    DialAddress target;
    try {
      target = DialAddress.parse(address);
    } catch (IllegalArgumentException e) {
      dialFailed(random, "dial tcp " + e.getMessage(), AgentMetrics.DialFailure.UNKNOWN);
      return;
    }
    PendingDial pd = new PendingDial(random, address, ctx.time().ticker().nanoTime());
    pendingDials.put(random, pd);
    Duration timeout = ctx.config().dialTimeout();
    pd.timer = ctx.time().scheduler().schedule(
        () -> onLoop(() -> onDialTimeout(pd)), timeout.toNanos(), TimeUnit.NANOSECONDS);
    byte[] literal = target.literal();
    if (literal != null) {
      try {
        connect(pd, new InetSocketAddress(InetAddress.getByAddress(target.host(), literal), target.port()));
      } catch (UnknownHostException e) {
        throw new AssertionError("literal IP rejected: " + target.host(), e);
      }
      return;
    }
    // Name lookups block; they run off the event loop and come back to it.
    ctx.blockingExecutor().execute(() -> {
      try {
        InetAddress resolved = InetAddress.getByName(target.host());
        onLoop(() -> connect(pd, new InetSocketAddress(resolved, target.port())));
      } catch (UnknownHostException e) {
        onLoop(() -> {
          if (pendingDials.remove(pd.random, pd)) {
            pd.abandon();
            dialFailed(pd.random, "dial tcp: lookup " + target.host() + ": no such host",
                AgentMetrics.DialFailure.UNKNOWN);
          }
        });
      }
    });
  }

  private void connect(PendingDial pd, InetSocketAddress target) {
    if (pendingDials.get(pd.random) != pd) {
      return; // cancelled by DIAL_CLS, timed out, or shut down while resolving
    }
    ChannelFuture f = bootstrap.connect(target);
    pd.channel = f.channel();
    f.addListener(done -> onConnectDone(pd, f));
  }

  private void onConnectDone(PendingDial pd, ChannelFuture f) {
    pd.cancelTimer();
    Channel ch = f.channel();
    if (!pendingDials.remove(pd.random, pd)) {
      ch.close(); // DIAL_CLS or timeout came first: nobody wants this socket
      return;
    }
    if (!f.isSuccess() || !ch.isActive()) {
      ch.close();
      Throwable cause = f.cause();
      dialFailed(pd.random, "dial tcp " + pd.address + ": " + describe(cause), AgentMetrics.DialFailure.UNKNOWN);
      return;
    }
    ctx.metrics().dialSucceeded(Duration.ofNanos(ctx.time().ticker().nanoTime() - pd.startNanos));
    long connectId = ++lastConnectId;
    BackendConnection bc = new BackendConnection(this, connectId, pd.address, ch, ctx.config().xfrChannelSize(), flow);
    backends.put(connectId, bc);
    ctx.metrics().endpointOpened();
    ch.pipeline().addLast(bc);
    log.debug("Dial {} => {} connected as connect {} (server {})", pd.random, pd.address, connectId, serverId);
    send(Packet.newBuilder()
        .setType(PacketType.DIAL_RSP)
        .setDialResponse(DialResponse.newBuilder().setRandom(pd.random).setConnectID(connectId))
        .build());
    wantRead(bc);
  }

  private static String describe(Throwable cause) {
    if (cause == null) {
      return "connection closed";
    }
    String msg = cause.getMessage() == null ? cause.getClass().getSimpleName() : cause.getMessage();
    if (cause instanceof ConnectException && msg.toLowerCase(java.util.Locale.ROOT).contains("refused")) {
      return "connect: connection refused"; // Go's wording, which callers may match on
    }
    return "connect: " + msg;
  }

  private void onDialTimeout(PendingDial pd) {
    if (!pendingDials.remove(pd.random, pd)) {
      return;
    }
    pd.timer = null;
    pd.abandon();
    dialFailed(pd.random, "dial tcp " + pd.address + ": i/o timeout", AgentMetrics.DialFailure.TIMEOUT);
  }

  private void dialFailed(long random, String error, AgentMetrics.DialFailure reason) {
    log.debug("Dial {} failed: {}", random, error);
    ctx.metrics().dialFailed(reason);
    send(Packet.newBuilder()
        .setType(PacketType.DIAL_RSP)
        .setDialResponse(DialResponse.newBuilder().setRandom(random).setError(error))
        .build());
  }

  private void onCloseDial(CloseDial cls) {
    PendingDial pd = pendingDials.remove(cls.getRandom());
    if (pd == null) {
      log.debug("DIAL_CLS for dial {} that is not pending (server {})", cls.getRandom(), serverId);
      return;
    }
    log.debug("DIAL_CLS: abandoning dial {} => {}", pd.random, pd.address);
    pd.abandon();
  }

  // ---- data and close ----

  private void onData(Data data) {
    long connectId = data.getConnectID();
    if (connectId == 0) {
      log.warn("Dropping DATA without connectID from server {}", serverId);
      return;
    }
    BackendConnection bc = backends.get(connectId);
    if (bc == null) {
      log.debug("DATA for unrecognized connect {} from server {}", connectId, serverId);
      sendCloseResponse(connectId, "unrecognized connectID");
      return;
    }
    if (!bc.offer(data.getData())) {
      if (bc.sendCredit() != null) {
        flowControlViolated(bc, "server sent " + data.getData().size() + " bytes with " + bc.queuedBytes()
            + " already queued (expected: at most the window " + flow.receiveWindow() + " and one packet)");
        return;
      }
      removeBackend(bc);
      ctx.metrics().endpointQueueOverflow();
      log.warn("Closing {}: its queue of {} packets toward the backend is full (server {})",
          bc, ctx.config().xfrChannelSize(), serverId);
      bc.close();
      sendCloseResponse(connectId, "agent: connection " + connectId + " closed: backend too slow, "
          + ctx.config().xfrChannelSize() + " packets queued (xfr-channel-size)");
    }
  }

  private void onWindowUpdate(WindowUpdate update) {
    long connectId = update.getConnectID();
    BackendConnection bc = backends.get(connectId);
    if (bc == null || bc.sendCredit() == null) {
      // After a close the server may still grant credit for bytes it wrote just before.
      log.debug("Window update for {} connect {} from server {} ignored",
          bc == null ? "unknown" : "non-flow-controlled", connectId, serverId);
      return;
    }
    String malformed = bc.sendCredit().grant(update.getBytes());
    if (malformed != null) {
      flowControlViolated(bc, malformed);
      return;
    }
    if (bc.creditPaused() && bc.sendCredit().available()) {
      setCreditPaused(bc, false);
      wantRead(bc);
    }
  }

  /** The server broke the credit protocol for {@code bc}: close it alone and tell the server why. */
  private void flowControlViolated(BackendConnection bc, String why) {
    removeBackend(bc);
    ctx.metrics().flowControlError();
    log.warn("Closing {}: flow control violated by server {}: {}", bc, serverId, why);
    bc.close();
    sendCloseResponse(bc.connectId(), "agent: connection " + bc.connectId() + " closed: flow control violated: " + why);
  }

  private void removeBackend(BackendConnection bc) {
    if (backends.remove(bc.connectId(), bc)) {
      ctx.metrics().endpointClosed();
      setCreditPaused(bc, false);
    }
  }

  private void setCreditPaused(BackendConnection bc, boolean paused) {
    if (bc.creditPaused() != paused) {
      bc.creditPaused(paused);
      ctx.metrics().flowControlPaused(paused ? 1 : -1);
    }
  }

  /** {@code bc} wrote bytes to its backend: grant them back to the server (flow control only). */
  void grantCredit(BackendConnection bc, long bytes) {
    if (!streamOpen || backends.get(bc.connectId()) != bc) {
      return;
    }
    send(Packet.newBuilder()
        .setType(PacketType.PORTAGE_WINDOW_UPDATE)
        .setWindowUpdate(WindowUpdate.newBuilder().setConnectID(bc.connectId()).setBytes(bytes))
        .build());
  }

  /** Some connection now holds {@code bytes} queued toward its backend. */
  void queued(long bytes) {
    ctx.metrics().queued(bytes);
  }

  private void onCloseRequest(CloseRequest req) {
    long connectId = req.getConnectID();
    BackendConnection bc = backends.get(connectId);
    if (bc == null) {
      log.debug("CLOSE_REQ for unknown connect {} from server {}", connectId, serverId);
      sendCloseResponse(connectId, "Unknown connectID");
      return;
    }
    removeBackend(bc);
    log.debug("CLOSE_REQ: closing {}", bc);
    bc.closeAfterFlush();
    // A backend that stopped reading must not keep its socket forever once the server is done with it.
    ScheduledFuture<?> forceClose = ctx.time().scheduler().schedule(
        () -> onLoop(bc::close), ctx.config().dialTimeout().toNanos(), TimeUnit.NANOSECONDS);
    bc.channel().closeFuture().addListener(f -> forceClose.cancel(false));
    sendCloseResponse(connectId, "");
  }

  /** A backend socket closed: unless we closed it on request, tell the server (unsolicited CLOSE_RSP). */
  void onBackendClosed(BackendConnection bc) {
    if (backends.get(bc.connectId()) == bc) {
      removeBackend(bc);
      log.debug("Backend closed {}", bc);
      sendCloseResponse(bc.connectId(), "");
    }
  }

  /** One chunk read from a backend; consumes (releases) {@code buf}. */
  void onBackendData(BackendConnection bc, ByteBuf buf) {
    try {
      if (backends.get(bc.connectId()) != bc || !streamOpen) {
        return;
      }
      int size = buf.readableBytes();
      // gRPC serializes the packet into its own frame buffers inside sendMessage (retry is off on
      // this channel, so nothing keeps the message), so the payload may live in a scratch array.
      send(Packet.newBuilder()
          .setType(PacketType.DATA)
          .setData(Data.newBuilder().setConnectID(bc.connectId()).setData(ScratchPayload.wrap(buf)))
          .build());
      if (bc.sendCredit() != null) {
        bc.sendCredit().consume(size);
      }
    } finally {
      buf.release();
    }
    wantRead(bc);
  }

  private void wantRead(BackendConnection bc) {
    if (!streamOpen || backends.get(bc.connectId()) != bc) {
      return;
    }
    if (bc.sendCredit() != null && !bc.sendCredit().available()) {
      setCreditPaused(bc, true); // the server's window update resumes reading
      return;
    }
    if (call.isReady()) {
      bc.read();
    } else if (bc.markReadWanted()) {
      waitingForReady.add(bc);
    }
  }

  private void readWaitingBackends() {
    BackendConnection bc;
    while (streamOpen && call.isReady() && (bc = waitingForReady.poll()) != null) {
      if (bc.readWanted() && backends.get(bc.connectId()) == bc) {
        bc.read();
      }
    }
  }

  private void sendCloseResponse(long connectId, String error) {
    send(Packet.newBuilder()
        .setType(PacketType.CLOSE_RSP)
        .setCloseResponse(CloseResponse.newBuilder().setConnectID(connectId).setError(error))
        .build());
  }

  private void send(Packet packet) {
    if (!streamOpen) {
      return;
    }
    try {
      call.sendMessage(packet);
      ctx.metrics().packetSent(packet.getType());
    } catch (RuntimeException e) {
      ctx.metrics().sendError(Status.fromThrowable(e), packet.getType());
      log.debug("Sending {} to server {} failed", packet.getType(), serverId, e);
    }
  }

  private void shutdown(Status status) {
    if (shutdown) {
      return;
    }
    shutdown = true;
    connected.completeExceptionally(status.asRuntimeException());
    for (PendingDial pd : new ArrayList<>(pendingDials.values())) {
      pendingDials.remove(pd.random, pd);
      pd.abandon();
    }
    for (BackendConnection bc : new ArrayList<>(backends.values())) {
      if (backends.get(bc.connectId()) == bc) {
        removeBackend(bc);
        bc.close();
      }
    }
    if (flow != null) {
      ctx.metrics().flowControlConnection(-1);
    }
    waitingForReady.clear();
    channel.shutdownNow();
    onClosed.accept(this);
    closed.complete(null);
  }

  @Override
  public String toString() {
    return "server " + (serverId == null ? "?" : serverId);
  }
}
