package dev.portage.proxy.service;

import dev.portage.core.balance.Balancer;
import dev.portage.core.balance.Endpoint;
import dev.portage.core.balance.Pick;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The listener of one service port and the state connections read from it: the balancer over the
 * service's endpoints and the client-IP affinity table. Updates ({@link #update}, {@link #close})
 * come from the sync only; accepted connections read an immutable {@link State} snapshot on their
 * event loop, swapped atomically by updates.
 */
final class ServiceListener {

  private static final Logger log = LoggerFactory.getLogger(ServiceListener.class);

  /** What one update installed; connections choose from the snapshot they read. */
  record State(ServiceSpec spec, Balancer<InetSocketAddress> balancer, ClientIpAffinity affinity) {}

  /**
   * An endpoint chosen for one dial: by the balancer ({@code pick} non-null) or by affinity.
   *
   * @param state the snapshot it was chosen from, so affinity is recorded in the same table
   */
  record Choice(Endpoint<InetSocketAddress> endpoint, Pick<InetSocketAddress> pick, State state) {

    void complete(long connectNanos) {
      if (pick != null) {
        pick.complete(connectNanos);
      }
    }

    void fail() {
      if (pick != null) {
        pick.fail();
      }
    }
  }

  private final String name;
  private final ListenerContext context;
  private volatile State state;
  private Channel serverChannel;

  private ServiceListener(ServiceSpec spec, ListenerContext context) {
    this.name = spec.name();
    this.context = context;
    Balancer<InetSocketAddress> balancer = spec.balancer().newBalancer(context.ticker());
    balancer.update(endpoints(spec));
    this.state = new State(spec, balancer, newAffinity(spec, null));
  }

  /**
   * Binds a listener for {@code spec}. Call from the sync, never from an event loop (it waits for the
   * bind).
   *
   * @throws IOException if the address cannot be bound
   */
  static ServiceListener open(ServiceSpec spec, ListenerContext context) throws IOException {
    ServiceListener listener = new ServiceListener(spec, context);
    ChannelFuture bind =
        new ServerBootstrap()
            .group(context.group())
            .channel(context.transport().serverChannelType())
            // Nothing is read before the relay is installed, and an early EOF is relayed, not fatal.
            .childOption(ChannelOption.AUTO_READ, false)
            .childOption(ChannelOption.ALLOW_HALF_CLOSURE, true)
            // Netty's default too; explicit because a relay must never wait for Nagle + delayed ACK.
            .childOption(ChannelOption.TCP_NODELAY, true)
            .childOption(ChannelOption.RECVBUF_ALLOCATOR, context.reads())
            .childOption(ChannelOption.ALLOCATOR, context.transport().allocator())
            .childHandler(
                new ChannelInitializer<>() {
                  @Override
                  protected void initChannel(Channel ch) {
                    new ProxiedConnection(listener, ch, context).start();
                  }
                })
            .bind(spec.listen())
            .awaitUninterruptibly();
    if (!bind.isSuccess()) {
      throw new IOException(
          "service " + spec.name() + ": cannot listen on " + HostPort.format(spec.listen()) + ": "
              + bind.cause().getMessage(),
          bind.cause());
    }
    listener.serverChannel = bind.channel();
    log.info("Service {} listening on {} ({} endpoints, {})",
        spec.name(), listener.localAddress(), spec.endpoints().size(), spec.balancer().label);
    return listener;
  }

  String name() {
    return name;
  }

  ServiceSpec spec() {
    return state.spec();
  }

  /** The bound address, with the real port when port 0 was asked for. */
  InetSocketAddress localAddress() {
    return (InetSocketAddress) serverChannel.localAddress();
  }

  /**
   * Installs a new spec with the same listen address: the balancer is updated in place (endpoints
   * that stay keep their state) unless its kind changed, and affinity entries of removed endpoints are
   * dropped.
   */
  void update(ServiceSpec spec) {
    State old = state;
    Balancer<InetSocketAddress> balancer =
        old.spec().balancer() == spec.balancer()
            ? old.balancer()
            : spec.balancer().newBalancer(context.ticker());
    balancer.update(endpoints(spec));
    ClientIpAffinity affinity = newAffinity(spec, old.affinity());
    if (affinity != null) {
      affinity.retain(endpointIds(spec));
    }
    state = new State(spec, balancer, affinity);
  }

  /** Drops expired affinity entries (kube-proxy cleans stale sticky sessions on every sync). */
  void expireAffinity() {
    ClientIpAffinity affinity = state.affinity();
    if (affinity != null) {
      affinity.expire();
    }
  }

  /** Ids of the endpoints the balancer holds now, in order. */
  List<String> endpointIds() {
    return state.balancer().endpoints().stream().map(Endpoint::id).toList();
  }

  /** The balancer in use now (replaced when the service's balancer kind changes). */
  Balancer<InetSocketAddress> balancer() {
    return state.balancer();
  }

  /** Affinity entries held now; for tests. */
  int affinityEntries() {
    ClientIpAffinity affinity = state.affinity();
    return affinity == null ? 0 : affinity.size();
  }

  /**
   * The endpoint for a new dial from {@code client}: its affinity endpoint while that is still in the
   * service and healthy (unless {@code useAffinity} is false, as after a failed dial), else the
   * balancer's pick.
   *
   * @return the choice, or null when the service has no healthy endpoint
   */
  Choice choose(InetAddress client, boolean useAffinity) {
    State s = state;
    if (useAffinity && s.affinity() != null) {
      String sticky = s.affinity().lookup(client);
      if (sticky != null) {
        for (Endpoint<InetSocketAddress> endpoint : s.balancer().endpoints()) {
          if (endpoint.id().equals(sticky) && endpoint.isHealthy()) {
            return new Choice(endpoint, null, s);
          }
        }
      }
    }
    Pick<InetSocketAddress> pick = s.balancer().pick();
    return pick == null ? null : new Choice(pick.endpoint(), pick, s);
  }

  /** A dial from {@code client} to {@code choice} succeeded: stick to it if affinity is on. */
  void connected(InetAddress client, Choice choice) {
    ClientIpAffinity affinity = choice.state().affinity();
    if (affinity != null) {
      affinity.record(client, choice.endpoint().id());
    }
  }

  /** Unbinds; connections already accepted go on. Call from the sync or close, not an event loop. */
  void close() {
    serverChannel.close().awaitUninterruptibly();
    log.info("Service {} stopped listening on {}", name, serverChannel.localAddress());
  }

  static List<Endpoint<InetSocketAddress>> endpoints(ServiceSpec spec) {
    List<Endpoint<InetSocketAddress>> endpoints = new ArrayList<>(spec.endpoints().size());
    for (InetSocketAddress address : spec.endpoints()) {
      endpoints.add(Endpoint.of(HostPort.format(address), address));
    }
    return endpoints;
  }

  static Set<String> endpointIds(ServiceSpec spec) {
    Set<String> ids = new HashSet<>();
    for (InetSocketAddress address : spec.endpoints()) {
      ids.add(HostPort.format(address));
    }
    return ids;
  }

  private ClientIpAffinity newAffinity(ServiceSpec spec, ClientIpAffinity old) {
    if (spec.affinityTimeout() == null) {
      return null;
    }
    if (old != null && Objects.equals(old.timeout(), spec.affinityTimeout())) {
      return old;
    }
    return new ClientIpAffinity(spec.affinityTimeout(), context.ticker());
  }
}
