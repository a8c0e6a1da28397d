package dev.portage.proxy.service;

import dev.portage.control.client.ControlPlaneTls;
import dev.portage.control.client.destination.DestinationClient;
import dev.portage.control.client.destination.DestinationWatch;
import dev.portage.control.client.destination.EndpointListener;
import dev.portage.control.client.destination.EndpointSet;
import dev.portage.core.time.TimeSource;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Services whose endpoints come from the control plane's Destination API: the endpoints file lists
 * the services and, instead of {@code endpoints:}, the {@code authority:} to resolve
 * ({@code web.default.svc.cluster.local:8080}); each authority is watched with the {@link
 * DestinationClient} and the file's services get the resolved endpoints (none until the first
 * answer). Services with literal endpoints pass through. File changes open and close watches.
 *
 * <p>File deliveries (the watch thread) and endpoint sets (the client's synchronization context)
 * are merged under one lock, and every change delivers the whole state.
 */
final class DestinationEndpointSource implements EndpointSource {

  private static final Logger log = LoggerFactory.getLogger(DestinationEndpointSource.class);

  private final FileEndpointSource file;
  private final DestinationClient client;
  private final ManagedChannel ownedChannel;
  private final String target;
  private final Object lock = new Object();
  private final Map<String, DestinationWatch> watches = new HashMap<>(); // guarded by lock
  private final Map<String, List<InetSocketAddress>> resolved = new HashMap<>(); // guarded by lock
  /** Authorities the file names now; a watch may deliver inside watchEndpoints, before it is stored. */
  private Set<String> wanted = Set.of(); // guarded by lock
  private Map<String, ServiceSpec> fileState = Map.of(); // guarded by lock
  private Consumer<Map<String, ServiceSpec>> listener; // guarded by lock
  private boolean closed; // guarded by lock

  /**
   * @param ownedChannel closed with the source, or null when the caller owns the client's channel
   */
  DestinationEndpointSource(
      FileEndpointSource file, DestinationClient client, ManagedChannel ownedChannel, String target) {
    this.file = Objects.requireNonNull(file, "file");
    this.client = Objects.requireNonNull(client, "client");
    this.ownedChannel = ownedChannel;
    this.target = target;
  }

  /**
   * A source with a gRPC channel of its own to {@code destinationAddr}: TLS as {@code tls} says, or
   * plaintext when it is null.
   *
   * @throws IllegalArgumentException naming the address or the TLS file that is wrong
   */
  static DestinationEndpointSource connect(
      String destinationAddr, ControlPlaneTls tls, FileEndpointSource file, TimeSource time) {
    HostPort.parse(destinationAddr, "destinationAddr"); // validate now, with a clear message
    ManagedChannel channel;
    try {
      channel = ControlPlaneTls.channel(destinationAddr, tls);
    } catch (IOException e) {
      throw new IllegalArgumentException("destination TLS: " + e.getMessage(), e);
    }
    return new DestinationEndpointSource(
        file, DestinationClient.newBuilder(channel, time).build(), channel, destinationAddr);
  }

  @Override
  public void start(Consumer<Map<String, ServiceSpec>> listener) throws IOException {
    synchronized (lock) {
      this.listener = Objects.requireNonNull(listener, "listener");
    }
    file.start(this::onFile);
  }

  /** Re-reads the endpoints file now (see {@link FileEndpointSource#reload()}). */
  boolean reloadFile() throws IOException {
    return file.reload();
  }

  private void onFile(Map<String, ServiceSpec> services) {
    synchronized (lock) {
      if (closed) {
        return;
      }
      fileState = services;
      Set<String> authorities = new HashSet<>();
      for (ServiceSpec spec : services.values()) {
        if (spec.authority() != null) {
          authorities.add(spec.authority());
        }
      }
      wanted = authorities;
      watches.entrySet().removeIf(entry -> {
        if (authorities.contains(entry.getKey())) {
          return false;
        }
        entry.getValue().close();
        resolved.remove(entry.getKey());
        return true;
      });
      for (String authority : authorities) {
        if (!watches.containsKey(authority)) {
          watches.put(authority, client.watchEndpoints(authority, new Resolution(authority)));
        }
      }
      deliverLocked();
    }
  }

  private void onEndpoints(String authority, EndpointSet set) {
    List<InetSocketAddress> endpoints = set.endpoints().keySet().stream()
        .sorted(Comparator.comparing(HostPort::format))
        .toList();
    synchronized (lock) {
      if (closed || !wanted.contains(authority)) {
        return;
      }
      if (!set.exists()) {
        log.warn("Destination {}: the control plane does not know this service", authority);
      }
      resolved.put(authority, endpoints);
      deliverLocked();
    }
  }

  private void deliverLocked() {
    Map<String, ServiceSpec> state = new LinkedHashMap<>();
    for (ServiceSpec spec : fileState.values()) {
      state.put(spec.name(), spec.authority() == null
          ? spec
          : spec.withEndpoints(resolved.getOrDefault(spec.authority(), List.of())));
    }
    listener.accept(state);
  }

  @Override
  public void close() {
    file.close();
    synchronized (lock) {
      if (closed) {
        return;
      }
      closed = true;
      watches.clear();
    }
    client.close();
    if (ownedChannel != null) {
      ownedChannel.shutdownNow();
    }
  }

  @Override
  public String toString() {
    return "destination " + target + " (services from " + file + ")";
  }

  /** Endpoint sets of one authority. */
  private final class Resolution implements EndpointListener {
    private final String authority;

    Resolution(String authority) {
      this.authority = authority;
    }

    @Override
    public void onEndpoints(EndpointSet endpoints) {
      DestinationEndpointSource.this.onEndpoints(authority, endpoints);
    }

    @Override
    public void onError(Status status) {
      log.warn("Destination {}: watch ended for good: {}", authority, status);
    }
  }
}
