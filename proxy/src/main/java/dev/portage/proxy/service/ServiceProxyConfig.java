package dev.portage.proxy.service;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * Settings of a {@link ServiceProxy}, one field per {@code portage service-proxy} flag. Exactly one
 * endpoint source is chosen: {@code endpointsFile} alone (the file lists endpoints), {@code
 * kubernetes} (Services and EndpointSlices; {@code kubeconfig} or the in-cluster/default config),
 * or {@code destinationAddr} with {@code endpointsFile} (the file lists authorities to resolve).
 * Immutable; build with {@link #builder()}.
 *
 * @param endpointsFile YAML services file, or null
 * @param kubernetes whether to read Services and EndpointSlices from the Kubernetes API
 * @param kubeconfig kubeconfig file for the Kubernetes source, or null for the default lookup
 * @param destinationAddr control plane Destination API {@code host:port}, or null
 * @param bindAddress host the Kubernetes source's listeners bind (with each Service port)
 * @param minSyncPeriod least time between syncs beyond the burst (kube-proxy {@code --min-sync-period})
 * @param syncPeriod most time between syncs (kube-proxy {@code --sync-period})
 * @param syncBurst syncs allowed back to back (kube-proxy: 2)
 * @param adminBindAddress admin listener host
 * @param adminPort admin listener port ({@code /healthz}, {@code /readyz}, {@code /metrics}); 0 picks
 *     one, negative disables it
 * @param closeRemovedEndpointConnections whether connections to an endpoint that left its service
 *     are closed at the next sync (default: they are left to finish)
 * @param dialTimeouts the timeout of each dial attempt; one attempt per entry, each to the next endpoint
 * @param ioThreads event loop threads; 0 means Netty's default
 * @param maxReadSize the most bytes one socket read of a relayed connection may take (Netty's
 *     adaptive reads grow toward it only while reads fill their buffer, i.e. on bulk transfers)
 */
public record ServiceProxyConfig(
    Path endpointsFile,
    boolean kubernetes,
    Path kubeconfig,
    String destinationAddr,
    String bindAddress,
    Duration minSyncPeriod,
    Duration syncPeriod,
    int syncBurst,
    String adminBindAddress,
    int adminPort,
    boolean closeRemovedEndpointConnections,
    List<Duration> dialTimeouts,
    int ioThreads,
    int maxReadSize) {

  /** kube-proxy userspace's {@code EndpointDialTimeouts}. */
  public static final List<Duration> DEFAULT_DIAL_TIMEOUTS =
      List.of(Duration.ofMillis(250), Duration.ofMillis(500), Duration.ofSeconds(1), Duration.ofSeconds(2));

  /**
   * 1 MiB: one stream through the proxy took 0.39-0.54 CPU seconds per GiB with reads of up to 1 MiB
   * against 0.65-0.93 with Netty's default 64 KiB (docs/benchmarks-proxy.md, "L4 single stream").
   */
  public static final int DEFAULT_MAX_READ_SIZE = 1 << 20;

  /** Bounds of {@code maxReadSize}. */
  static final int MIN_MAX_READ_SIZE = 4 << 10;

  static final int MAX_MAX_READ_SIZE = 16 << 20;

  /** kube-proxy's metrics port. */
  public static final int DEFAULT_ADMIN_PORT = 10249;

  public ServiceProxyConfig {
    Objects.requireNonNull(bindAddress, "bindAddress");
    Objects.requireNonNull(minSyncPeriod, "minSyncPeriod");
    Objects.requireNonNull(syncPeriod, "syncPeriod");
    Objects.requireNonNull(adminBindAddress, "adminBindAddress");
    dialTimeouts = List.copyOf(Objects.requireNonNull(dialTimeouts, "dialTimeouts"));
    int sources = (kubernetes ? 1 : 0) + (destinationAddr != null ? 1 : 0)
        + (endpointsFile != null && destinationAddr == null ? 1 : 0);
    if (sources != 1) {
      throw new IllegalArgumentException(
          "endpoint source: " + (sources == 0 ? "none" : "several") + " given (expected: exactly one of"
              + " --endpoints-file, --kubeconfig/--kubernetes, --destination-addr with --endpoints-file)");
    }
    if (kubeconfig != null && !kubernetes) {
      throw new IllegalArgumentException("kubeconfig: " + kubeconfig + " (expected: only with kubernetes)");
    }
    if (destinationAddr != null && endpointsFile == null) {
      throw new IllegalArgumentException(
          "destinationAddr: " + destinationAddr + " (expected: with an endpoints file listing authorities)");
    }
    if (minSyncPeriod.isNegative()) {
      throw new IllegalArgumentException("minSyncPeriod: " + minSyncPeriod + " (expected: >= 0)");
    }
    if (syncPeriod.compareTo(minSyncPeriod) < 0 || syncPeriod.isZero()) {
      throw new IllegalArgumentException(
          "syncPeriod: " + syncPeriod + " (expected: > 0 and >= minSyncPeriod " + minSyncPeriod + ")");
    }
    if (syncBurst < 1) {
      throw new IllegalArgumentException("syncBurst: " + syncBurst + " (expected: >= 1)");
    }
    if (adminPort > 65535) {
      throw new IllegalArgumentException("adminPort: " + adminPort + " (expected: <= 65535)");
    }
    if (dialTimeouts.isEmpty()) {
      throw new IllegalArgumentException("dialTimeouts: [] (expected: at least one)");
    }
    for (Duration timeout : dialTimeouts) {
      if (timeout.isNegative() || timeout.isZero()) {
        throw new IllegalArgumentException("dialTimeouts: " + timeout + " (expected: > 0)");
      }
    }
    if (ioThreads < 0) {
      throw new IllegalArgumentException("ioThreads: " + ioThreads + " (expected: >= 0)");
    }
    if (maxReadSize < MIN_MAX_READ_SIZE || maxReadSize > MAX_MAX_READ_SIZE) {
      throw new IllegalArgumentException("maxReadSize: " + maxReadSize + " (expected: >= "
          + MIN_MAX_READ_SIZE + " and <= " + MAX_MAX_READ_SIZE + ")");
    }
  }

  /** A builder with kube-proxy's defaults and no source chosen yet. */
  public static Builder builder() {
    return new Builder();
  }

  /** Options of a {@link ServiceProxyConfig}; not thread-safe. */
  public static final class Builder {
    private Path endpointsFile;
    private boolean kubernetes;
    private Path kubeconfig;
    private String destinationAddr;
    private String bindAddress = "0.0.0.0";
    private Duration minSyncPeriod = Duration.ofSeconds(1);
    private Duration syncPeriod = Duration.ofSeconds(30);
    private int syncBurst = 2;
    private String adminBindAddress = "127.0.0.1";
    private int adminPort = DEFAULT_ADMIN_PORT;
    private boolean closeRemovedEndpointConnections;
    private List<Duration> dialTimeouts = DEFAULT_DIAL_TIMEOUTS;
    private int ioThreads;
    private int maxReadSize = DEFAULT_MAX_READ_SIZE;

    private Builder() {}

    public Builder endpointsFile(Path file) {
      this.endpointsFile = file;
      return this;
    }

    /** Reads Services and EndpointSlices from the Kubernetes API. */
    public Builder kubernetes(boolean kubernetes) {
      this.kubernetes = kubernetes;
      return this;
    }

    /** Kubeconfig of the Kubernetes source; implies {@link #kubernetes(boolean) kubernetes(true)}. */
    public Builder kubeconfig(Path kubeconfig) {
      this.kubeconfig = kubeconfig;
      if (kubeconfig != null) {
        this.kubernetes = true;
      }
      return this;
    }

    public Builder destinationAddr(String hostPort) {
      this.destinationAddr = hostPort;
      return this;
    }

    public Builder bindAddress(String host) {
      this.bindAddress = host;
      return this;
    }

    public Builder minSyncPeriod(Duration period) {
      this.minSyncPeriod = period;
      return this;
    }

    public Builder syncPeriod(Duration period) {
      this.syncPeriod = period;
      return this;
    }

    public Builder syncBurst(int burst) {
      this.syncBurst = burst;
      return this;
    }

    public Builder adminBindAddress(String host) {
      this.adminBindAddress = host;
      return this;
    }

    public Builder adminPort(int port) {
      this.adminPort = port;
      return this;
    }

    public Builder closeRemovedEndpointConnections(boolean close) {
      this.closeRemovedEndpointConnections = close;
      return this;
    }

    public Builder dialTimeouts(List<Duration> timeouts) {
      this.dialTimeouts = timeouts;
      return this;
    }

    public Builder ioThreads(int threads) {
      this.ioThreads = threads;
      return this;
    }

    /**
     * The most bytes one read of a relayed socket may take; each direction of a connection then
     * holds at most this plus the write buffer's high water mark (64 KiB).
     */
    public Builder maxReadSize(int bytes) {
      this.maxReadSize = bytes;
      return this;
    }

    /** @throws IllegalArgumentException if the options do not fit together */
    public ServiceProxyConfig build() {
      return new ServiceProxyConfig(
          endpointsFile, kubernetes, kubeconfig, destinationAddr, bindAddress, minSyncPeriod,
          syncPeriod, syncBurst, adminBindAddress, adminPort, closeRemovedEndpointConnections,
          dialTimeouts, ioThreads, maxReadSize);
    }
  }
}
