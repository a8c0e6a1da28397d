package dev.portage.proxy.service;

import dev.portage.control.client.ControlPlaneTls;
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
 * @param destinationTls TLS to the control plane (CA, optional client certificate), or null for
 *     plaintext; only with {@code destinationAddr}
 * @param bindAddress host the userspace relay's listeners for Kubernetes Services bind (on ports of
 *     the proxy's choosing, which nftables redirects Service addresses to)
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
 * @param proxyMode how traffic moves: {@code NFTABLES} (kernel DNAT; needs the Kubernetes source) or
 *     {@code USERSPACE} (relay)
 * @param nftables the nftables table's layout (both modes program it for Kubernetes Services)
 * @param kernelRules whether the userspace mode programs nftables redirects of Service addresses to
 *     its listeners (off: listeners only, reachable on their own ports; for tests and for running
 *     without root)
 * @param nftCommand the {@code nft} command (with any prefix)
 * @param conntrackCommand the {@code conntrack} command (with any prefix)
 * @param hostname this node's name; endpoints on it are local (kube-proxy's {@code --hostname-override})
 * @param fullSyncPeriod how often the nftables table is rewritten whole (kube-proxy: 1 h)
 * @param healthzBindAddress host of kube-proxy's health server ({@code /healthz}, {@code /livez})
 * @param healthzPort its port (kube-proxy: 10256); 0 picks one, negative disables it
 */
public record ServiceProxyConfig(
    Path endpointsFile,
    boolean kubernetes,
    Path kubeconfig,
    String destinationAddr,
    ControlPlaneTls destinationTls,
    String bindAddress,
    Duration minSyncPeriod,
    Duration syncPeriod,
    int syncBurst,
    String adminBindAddress,
    int adminPort,
    boolean closeRemovedEndpointConnections,
    List<Duration> dialTimeouts,
    int ioThreads,
    int maxReadSize,
    ProxyMode proxyMode,
    dev.portage.proxy.service.nftables.NftablesOptions nftables,
    boolean kernelRules,
    List<String> nftCommand,
    List<String> conntrackCommand,
    String hostname,
    Duration fullSyncPeriod,
    String healthzBindAddress,
    int healthzPort) {

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

  /** kube-proxy's health port. */
  public static final int DEFAULT_HEALTHZ_PORT = 10256;

  public ServiceProxyConfig {
    Objects.requireNonNull(bindAddress, "bindAddress");
    Objects.requireNonNull(minSyncPeriod, "minSyncPeriod");
    Objects.requireNonNull(syncPeriod, "syncPeriod");
    if (destinationTls != null && destinationAddr == null) {
      throw new IllegalArgumentException("destinationTls: set (expected: only with destinationAddr)");
    }
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
    Objects.requireNonNull(proxyMode, "proxyMode");
    Objects.requireNonNull(nftables, "nftables");
    nftCommand = List.copyOf(Objects.requireNonNull(nftCommand, "nftCommand"));
    conntrackCommand = List.copyOf(Objects.requireNonNull(conntrackCommand, "conntrackCommand"));
    Objects.requireNonNull(fullSyncPeriod, "fullSyncPeriod");
    Objects.requireNonNull(healthzBindAddress, "healthzBindAddress");
    if (proxyMode == ProxyMode.NFTABLES && !kubernetes) {
      throw new IllegalArgumentException(
          "proxyMode: nftables (expected: with --kubernetes or --kubeconfig; the file and Destination"
              + " sources have no Service addresses to program, use --proxy-mode userspace)");
    }
    if (nftCommand.isEmpty() || conntrackCommand.isEmpty()) {
      throw new IllegalArgumentException("nftCommand/conntrackCommand: [] (expected: a command)");
    }
    if (fullSyncPeriod.compareTo(minSyncPeriod) < 0 || fullSyncPeriod.isZero()) {
      throw new IllegalArgumentException(
          "fullSyncPeriod: " + fullSyncPeriod + " (expected: > 0 and >= minSyncPeriod " + minSyncPeriod + ")");
    }
    if (healthzPort > 65535) {
      throw new IllegalArgumentException("healthzPort: " + healthzPort + " (expected: <= 65535)");
    }
  }

  /** The node name kube-proxy uses when none is given: the host name, lower-cased. */
  public static String defaultHostname() {
    String name = System.getenv("NODE_NAME");
    if (name == null || name.isBlank()) {
      try {
        name = java.net.InetAddress.getLocalHost().getHostName();
      } catch (java.net.UnknownHostException e) {
        name = "localhost";
      }
    }
    return name.strip().toLowerCase(java.util.Locale.ROOT);
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
    private ControlPlaneTls destinationTls;
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
    private ProxyMode proxyMode;
    private dev.portage.proxy.service.nftables.NftablesOptions nftables =
        dev.portage.proxy.service.nftables.NftablesOptions.defaults();
    private boolean kernelRules = true;
    private List<String> nftCommand = List.of("nft");
    private List<String> conntrackCommand = List.of("conntrack");
    private String hostname;
    private Duration fullSyncPeriod = Duration.ofHours(1);
    private String healthzBindAddress = "0.0.0.0";
    private int healthzPort = -1; // the CLI passes 10256; embedded proxies (tests, quickstart) opt in

    private Builder() {}

    /** The data plane; by default nftables with the Kubernetes source, userspace otherwise. */
    public Builder proxyMode(ProxyMode mode) {
      this.proxyMode = mode;
      return this;
    }

    public Builder nftables(dev.portage.proxy.service.nftables.NftablesOptions options) {
      this.nftables = options;
      return this;
    }

    /** Whether userspace mode redirects Service addresses to its listeners with nftables (default true). */
    public Builder kernelRules(boolean program) {
      this.kernelRules = program;
      return this;
    }

    public Builder nftCommand(List<String> command) {
      this.nftCommand = command;
      return this;
    }

    public Builder conntrackCommand(List<String> command) {
      this.conntrackCommand = command;
      return this;
    }

    /** This node's name; null means {@link ServiceProxyConfig#defaultHostname()}. */
    public Builder hostname(String name) {
      this.hostname = name;
      return this;
    }

    public Builder fullSyncPeriod(Duration period) {
      this.fullSyncPeriod = period;
      return this;
    }

    public Builder healthzBindAddress(String host) {
      this.healthzBindAddress = host;
      return this;
    }

    public Builder healthzPort(int port) {
      this.healthzPort = port;
      return this;
    }

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

    /** TLS to the control plane's Destination API; null (the default) for plaintext. */
    public Builder destinationTls(ControlPlaneTls tls) {
      this.destinationTls = tls;
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
      ProxyMode mode = proxyMode != null ? proxyMode : kubernetes ? ProxyMode.NFTABLES : ProxyMode.USERSPACE;
      return new ServiceProxyConfig(
          endpointsFile, kubernetes, kubeconfig, destinationAddr, destinationTls, bindAddress, minSyncPeriod,
          syncPeriod, syncBurst, adminBindAddress, adminPort, closeRemovedEndpointConnections,
          dialTimeouts, ioThreads, maxReadSize, mode, nftables, kernelRules, nftCommand,
          conntrackCommand, hostname != null ? hostname : defaultHostname(), fullSyncPeriod,
          healthzBindAddress, healthzPort);
    }
  }
}
