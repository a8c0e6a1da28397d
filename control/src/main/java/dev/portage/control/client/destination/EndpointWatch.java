package dev.portage.control.client.destination;

import dev.portage.api.linkerd.destination.DestinationGrpc;
import dev.portage.api.linkerd.destination.GetDestination;
import dev.portage.api.linkerd.destination.Update;
import dev.portage.api.linkerd.destination.WeightedAddr;
import dev.portage.api.linkerd.net.IPAddress;
import dev.portage.api.linkerd.net.TcpAddress;
import dev.portage.core.backoff.Backoff;
import io.grpc.Channel;
import io.grpc.Status;
import io.grpc.SynchronizationContext;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@code Get} watch: applies adds, removes and no-endpoints to the current set and hands whole sets to
 * the listener. The first message after each (re)connect replaces the set: an {@code add} resets it, a
 * {@code remove} is ignored (it cannot be relative to anything this stream sent). Until that first
 * message the last set stays in force. Confined to the client's synchronization context.
 */
final class EndpointWatch extends ReconnectingStream<Update> {

  private static final Logger log = LoggerFactory.getLogger(EndpointWatch.class);

  private final EndpointListener listener;
  private final Map<InetSocketAddress, ResolvedEndpoint> current = new LinkedHashMap<>();
  private boolean exists;
  private boolean resetPending;
  private EndpointSet delivered;

  EndpointWatch(
      Channel channel,
      GetDestination request,
      SynchronizationContext sync,
      ScheduledExecutorService scheduler,
      Backoff backoff,
      Consumer<ReconnectingStream<?>> onClosed,
      EndpointListener listener) {
    super(channel, DestinationGrpc.getGetMethod(), request, sync, scheduler, backoff, onClosed);
    this.listener = listener;
  }

  @Override
  void onStreamStarted() {
    resetPending = true;
  }

  @Override
  void onMessage(Update u) {
    switch (u.getUpdateCase()) {
      case ADD -> {
        if (resetPending) {
          current.clear();
          resetPending = false;
        }
        Map<String, String> setLabels = u.getAdd().getMetricLabelsMap();
        for (WeightedAddr a : u.getAdd().getAddrsList()) {
          InetSocketAddress address = decode(a.getAddr());
          if (address != null) {
            Map<String, String> labels = new HashMap<>(setLabels);
            labels.putAll(a.getMetricLabelsMap());
            int weight = (int) Math.min(Integer.MAX_VALUE, Integer.toUnsignedLong(a.getWeight()));
            current.put(address, new ResolvedEndpoint(address, weight, labels));
          }
        }
        exists = true;
      }
      case REMOVE -> {
        if (resetPending) {
          return;
        }
        for (TcpAddress a : u.getRemove().getAddrsList()) {
          InetSocketAddress address = decode(a);
          if (address != null) {
            current.remove(address);
          }
        }
      }
      case NO_ENDPOINTS -> {
        resetPending = false;
        current.clear();
        exists = u.getNoEndpoints().getExists();
      }
      default -> {
        log.debug("destination {}: empty update ignored", authority());
        return;
      }
    }
    EndpointSet next = new EndpointSet(exists, current);
    if (!next.equals(delivered) && !isClosed()) {
      delivered = next;
      listener.onEndpoints(next);
    }
  }

  @Override
  void onTerminalError(Status status) {
    listener.onError(status);
  }

  /** The address, or null when the message carries no usable IP. */
  static InetSocketAddress decode(TcpAddress a) {
    IPAddress ip = a.getIp();
    byte[] bytes;
    switch (ip.getIpCase()) {
      case IPV4 -> bytes = ByteBuffer.allocate(4).putInt(ip.getIpv4()).array();
      case IPV6 -> bytes = ByteBuffer.allocate(16).putLong(ip.getIpv6().getFirst()).putLong(ip.getIpv6().getLast()).array();
      default -> {
        return null;
      }
    }
    if (a.getPort() > 65535) {
      return null;
    }
    try {
      return new InetSocketAddress(InetAddress.getByAddress(bytes), a.getPort());
    } catch (UnknownHostException e) {
      throw new AssertionError("4 or 16 bytes are always an address", e);
    }
  }
}
