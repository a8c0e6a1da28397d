package dev.portage.hub.remote;

import io.netty.channel.Channel;
import io.netty.util.Attribute;
import io.netty.util.AttributeKey;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The upstream exchanges running for one client connection, kept as an attribute of the client's
 * channel. The connection gets one close listener, which ends whatever is still running when the
 * client goes away (a cancelled watch); an exchange leaves the set when it finishes. So a
 * long-lived keep-alive client — a kubelet — holds nothing of the exchanges it has already had
 * answered. An HTTP/1.1 client has one exchange at a time: it takes a field, not a set entry (a
 * node per request). Touched from the client's and the upstreams' event loops, under the object's
 * lock (never contended for long: no call out is made while holding it).
 */
final class ClientExchanges {

  private static final AttributeKey<ClientExchanges> KEY =
      AttributeKey.valueOf(ClientExchanges.class, "running");

  private final Channel client;
  private final AtomicInteger hubWide;
  private UpstreamExchange only; // guarded by this: the one running, or the first of several
  private Set<UpstreamExchange> more; // guarded by this: the others (null until needed)

  private ClientExchanges(Channel client, AtomicInteger hubWide) {
    this.client = client;
    this.hubWide = hubWide;
  }

  /** The set of {@code client}, made (with its one close listener) on first use. */
  static ClientExchanges of(Channel client, AtomicInteger hubWide) {
    Attribute<ClientExchanges> attr = client.attr(KEY);
    ClientExchanges existing = attr.get();
    if (existing != null) {
      return existing;
    }
    ClientExchanges made = new ClientExchanges(client, hubWide);
    existing = attr.setIfAbsent(made);
    if (existing != null) {
      return existing;
    }
    client.closeFuture().addListener(f -> made.clientGone());
    return made;
  }

  /** Exchanges running for this client now. */
  synchronized int size() {
    return (only == null ? 0 : 1) + (more == null ? 0 : more.size());
  }

  void add(UpstreamExchange exchange) {
    if (addRunning(exchange)) {
      hubWide.incrementAndGet();
    }
    // The close listener may have run already (the client left while the upstream was leased).
    if (!client.isOpen()) {
      exchange.clientGone();
    }
  }

  void remove(UpstreamExchange exchange) {
    if (removeRunning(exchange)) {
      hubWide.decrementAndGet();
    }
  }

  private synchronized boolean addRunning(UpstreamExchange exchange) {
    if (only == exchange) {
      return false;
    }
    if (only == null && (more == null || !more.contains(exchange))) {
      only = exchange;
      return true;
    }
    if (more == null) {
      more = new HashSet<>();
    }
    return more.add(exchange);
  }

  private synchronized boolean removeRunning(UpstreamExchange exchange) {
    if (only == exchange) {
      only = null;
      return true;
    }
    return more != null && more.remove(exchange);
  }

  private synchronized List<UpstreamExchange> running() {
    List<UpstreamExchange> all = new ArrayList<>(size());
    if (only != null) {
      all.add(only);
    }
    if (more != null) {
      all.addAll(more);
    }
    return all;
  }

  private void clientGone() {
    for (UpstreamExchange exchange : running()) {
      exchange.clientGone();
    }
  }
}
