package dev.portage.hub.remote;

import io.netty.channel.Channel;
import io.netty.util.Attribute;
import io.netty.util.AttributeKey;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The upstream exchanges running for one client connection, kept as an attribute of the client's
 * channel. The connection gets one close listener, which ends whatever is still running when the
 * client goes away (a cancelled watch); an exchange leaves the set when it finishes. So a
 * long-lived keep-alive client — a kubelet — holds nothing of the exchanges it has already had
 * answered. Touched from the client's and the upstreams' event loops.
 */
final class ClientExchanges {

  private static final AttributeKey<ClientExchanges> KEY =
      AttributeKey.valueOf(ClientExchanges.class, "running");

  private final Channel client;
  private final AtomicInteger hubWide;
  private final Set<UpstreamExchange> running = ConcurrentHashMap.newKeySet();

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
  int size() {
    return running.size();
  }

  void add(UpstreamExchange exchange) {
    if (running.add(exchange)) {
      hubWide.incrementAndGet();
    }
    // The close listener may have run already (the client left while the upstream was leased).
    if (!client.isOpen()) {
      exchange.clientGone();
    }
  }

  void remove(UpstreamExchange exchange) {
    if (running.remove(exchange)) {
      hubWide.decrementAndGet();
    }
  }

  private void clientGone() {
    for (UpstreamExchange exchange : running) {
      exchange.clientGone();
    }
  }
}
