package dev.portage.proxy.service;

import java.io.IOException;
import java.util.Map;
import dev.portage.core.time.TimeSource;
import java.util.function.Consumer;

/**
 * Where the service proxy learns its services and their endpoints. A source delivers the whole
 * desired state every time something changes (never a diff); the proxy coalesces deliveries into
 * bounded syncs, so a source may deliver as often as it likes. Deliveries may come from any thread
 * but never overlap.
 */
interface EndpointSource extends AutoCloseable {

  /**
   * Starts watching; {@code listener} receives every new state, keyed by service name.
   *
   * @throws IOException if the source cannot start (unreadable or malformed file, bad kubeconfig)
   */
  void start(Consumer<Map<String, ServiceSpec>> listener) throws IOException;

  /**
   * The source {@code config} names.
   *
   * @param onError counts rejected updates (a malformed file)
   */
  static EndpointSource fromConfig(ServiceProxyConfig config, TimeSource time, Runnable onError) {
    if (config.kubernetes()) {
      throw new IllegalArgumentException("the Kubernetes source is a KubernetesServiceSource, not an EndpointSource");
    }
    FileEndpointSource file = new FileEndpointSource(config.endpointsFile(), true, onError);
    if (config.destinationAddr() != null) {
      return DestinationEndpointSource.connect(config.destinationAddr(), config.destinationTls(), file, time);
    }
    return file;
  }

  /** Stops watching; no delivery starts after this returns. Idempotent. */
  @Override
  void close();
}
