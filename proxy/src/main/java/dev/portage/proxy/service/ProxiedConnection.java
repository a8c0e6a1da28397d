package dev.portage.proxy.service;

import dev.portage.core.net.Relay;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.prometheus.metrics.core.datapoints.CounterDataPoint;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One accepted client connection: dials an endpoint, trying the next one with a longer timeout after
 * each failure (kube-proxy userspace's {@code EndpointDialTimeouts}: 250 ms, 500 ms, 1 s, 2 s), then
 * relays bytes both ways with backpressure; the client is closed when every attempt fails or the
 * service has no endpoint. Lives in the proxy's live set from accept to the client's close.
 *
 * <p>Runs on the client channel's event loop; the backend channel is created on the same loop.
 */
final class ProxiedConnection {

  private static final Logger log = LoggerFactory.getLogger(ProxiedConnection.class);

  /** Backend channels need a handler before the relay installs its own. */
  @ChannelHandler.Sharable
  private static final class Idle extends ChannelInboundHandlerAdapter {
    static final Idle INSTANCE = new Idle();
  }

  private final ServiceListener listener;
  private final Channel client;
  private final ListenerContext context;
  private final String service;
  private final InetAddress clientIp;
  // Written and read on the client's event loop; volatile for closeIf from the sync.
  private volatile String endpointId;
  private Channel backend;
  private boolean done;

  ProxiedConnection(ServiceListener listener, Channel client, ListenerContext context) {
    this.listener = listener;
    this.client = client;
    this.context = context;
    this.service = listener.name();
    this.clientIp = ((InetSocketAddress) client.remoteAddress()).getAddress();
  }

  String service() {
    return service;
  }

  /** The endpoint relayed to, or null while dialing. */
  String endpointId() {
    return endpointId;
  }

  /**
   * The client's channel and, once a dial has connected, the backend's. On the client's event loop.
   */
  List<Channel> channels() {
    return backend == null ? List.of(client) : List.of(client, backend);
  }

  /** Registers the connection and starts dialing. On the client's event loop. */
  void start() {
    context.live().add(this);
    client.closeFuture().addListener(f -> onClientClosed());
    dial(0, true);
  }

  /** Closes the client (and so the relay and the backend). Any thread. */
  void close() {
    client.close();
  }

  private void dial(int attempt, boolean useAffinity) {
    if (done || !client.isActive()) {
      return;
    }
    if (attempt == context.dialTimeouts().size()) {
      log.debug("{}: every dial failed; closing {}", service, client);
      context.metrics().rejected(service, ServiceProxyMetrics.Rejection.DIALS_FAILED);
      client.close();
      return;
    }
    ServiceListener.Choice choice = listener.choose(clientIp, useAffinity);
    if (choice == null) {
      log.debug("{}: no endpoint; closing {}", service, client);
      context.metrics().rejected(service, ServiceProxyMetrics.Rejection.NO_ENDPOINTS);
      client.close();
      return;
    }
    Duration timeout = context.dialTimeouts().get(attempt);
    long started = context.ticker().nanoTime();
    ChannelFuture connect =
        new Bootstrap()
            .group(client.eventLoop())
            .channel(context.transport().channelType())
            .option(ChannelOption.AUTO_READ, false)
            .option(ChannelOption.ALLOW_HALF_CLOSURE, true)
            .option(ChannelOption.TCP_NODELAY, true)
            .option(ChannelOption.RECVBUF_ALLOCATOR, context.reads())
            .option(ChannelOption.ALLOCATOR, context.transport().allocator())
            .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.max(1, timeout.toMillis()))
            .handler(Idle.INSTANCE)
            .connect(choice.endpoint().target());
    connect.addListener(
        (ChannelFuture f) -> {
          if (f.isSuccess()) {
            connected(choice, f.channel(), context.ticker().nanoTime() - started);
          } else {
            choice.fail();
            context.metrics().dialFailed(service, choice.endpoint().id());
            log.debug("{}: dial {} (attempt {}, timeout {}) failed: {}",
                service, choice.endpoint().id(), attempt + 1, timeout, f.cause().toString());
            // kube-proxy resets affinity after a failed dial: the next attempt asks the balancer.
            dial(attempt + 1, false);
          }
        });
  }

  private void connected(ServiceListener.Choice choice, Channel backend, long connectNanos) {
    choice.complete(connectNanos);
    if (done || !client.isActive()) {
      backend.close();
      return;
    }
    listener.connected(clientIp, choice);
    this.backend = backend;
    this.endpointId = choice.endpoint().id();
    context.metrics().connectionOpened(service, endpointId);
    log.debug("{}: {} -> {}", service, client.remoteAddress(), endpointId);
    CounterDataPoint in = context.metrics().bytesIn(service);
    CounterDataPoint out = context.metrics().bytesOut(service);
    Relay.between(client, backend, in::inc, out::inc);
  }

  private void onClientClosed() {
    done = true;
    context.live().remove(this);
    if (backend != null) {
      // The relay closes the backend after flushing what is still queued for it.
      context.metrics().connectionClosed(service, endpointId);
    }
  }
}
