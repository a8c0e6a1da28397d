package dev.portage.tunnel.server;

import dev.portage.core.net.KeyExchangeGroup;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;

/**
 * Everything a {@link TunnelServer} needs to know, mirroring upstream proxy-server flags. Ports may be
 * 0 (ephemeral, for tests); {@code -1} turns the health or admin listener off. Immutable; build with
 * {@link #builder()}.
 *
 * <table>
 *   <caption>Defaults</caption>
 *   <tr><td>mode</td><td>grpc</td></tr>
 *   <tr><td>serverPort / agentPort / healthPort / adminPort</td><td>8090 / 8091 / 8092 / 8095</td></tr>
 *   <tr><td>proxyStrategies</td><td>default</td></tr>
 *   <tr><td>xfrChannelSize</td><td>10 packets: a connection may always queue this many toward its frontend</td></tr>
 *   <tr><td>connectionQueueBytes</td><td>4 MiB: beyond this (and xfrChannelSize packets) a connection is closed</td></tr>
 *   <tr><td>flowControlWindow</td><td>4 MiB: per-connection credit window with Portage agents that
 *       negotiate flow control; 0 turns it off (every agent then gets the overflow rule). A single
 *       stream moves at most about one window per credit round trip, so 1 MiB kept the agent waiting
 *       for credit half of the time on a loaded box</td></tr>
 *   <tr><td>backendDialTimeout</td><td>0 (none)</td></tr>
 *   <tr><td>headerReadTimeout</td><td>60 s (HTTP CONNECT request head)</td></tr>
 *   <tr><td>enableProfiling / enableContentionProfiling</td><td>false / false: JFR recording and thread
 *       dumps under {@code /debug/pprof/} on the admin listener (contention needs profiling)</td></tr>
 *   <tr><td>maxPendingHeads</td><td>1024 HTTP CONNECT connections still sending their request head;
 *       more are closed at accept (established tunnels do not count)</td></tr>
 * </table>
 */
public record TunnelServerConfig(
    String serverId,
    int serverCount,
    FrontendMode mode,
    String serverBindAddress,
    int serverPort,
    Path udsName,
    boolean deleteExistingUdsFile,
    TlsFiles frontendTls,
    String agentBindAddress,
    int agentPort,
    TlsFiles agentTls,
    String tlsMinVersion,
    List<String> cipherSuites,
    List<String> keyExchangeGroups,
    String healthBindAddress,
    int healthPort,
    String adminBindAddress,
    int adminPort,
    Duration keepaliveTime,
    Duration frontendKeepaliveTime,
    List<ProxyStrategy> proxyStrategies,
    int xfrChannelSize,
    long connectionQueueBytes,
    Duration backendDialTimeout,
    Duration headerReadTimeout,
    AgentTokenAuth agentTokenAuth,
    boolean enableLeaseController,
    String leaseNamespace,
    Map<String, String> leaseLabels,
    Duration gracefulShutdownTimeout,
    int grpcFrontendPort,
    long flowControlWindow,
    int maxPendingHeads,
    boolean enableProfiling,
    boolean enableContentionProfiling) {

  public TunnelServerConfig {
    requireText(serverId, "serverId");
    if (serverCount < 1) {
      throw new IllegalArgumentException("serverCount: " + serverCount + " (expected: >= 1)");
    }
    Objects.requireNonNull(mode, "mode");
    serverBindAddress = Objects.requireNonNullElse(serverBindAddress, "");
    agentBindAddress = Objects.requireNonNullElse(agentBindAddress, "");
    healthBindAddress = Objects.requireNonNullElse(healthBindAddress, "");
    adminBindAddress = Objects.requireNonNullElse(adminBindAddress, "127.0.0.1");
    checkPort(serverPort, "serverPort", false);
    checkPort(agentPort, "agentPort", false);
    checkPort(healthPort, "healthPort", true);
    checkPort(adminPort, "adminPort", true);
    if (udsName != null) {
      if (serverPort != 0) {
        throw new IllegalArgumentException(
            "serverPort: " + serverPort + " (expected: 0 when udsName is set)");
      }
      if (frontendTls != null) {
        throw new IllegalArgumentException("frontendTls: set with udsName (expected: no TLS on a Unix socket)");
      }
    }
    cipherSuites = List.copyOf(Objects.requireNonNullElse(cipherSuites, List.of()));
    keyExchangeGroups = KeyExchangeGroup.normalise("keyExchangeGroups", keyExchangeGroups);
    if (tlsMinVersion != null && !List.of("VersionTLS12", "VersionTLS13", "TLSv1.2", "TLSv1.3").contains(tlsMinVersion)) {
      throw new IllegalArgumentException(
          "tlsMinVersion: \"" + tlsMinVersion + "\" (expected: VersionTLS12 or VersionTLS13)");
    }
    requireNonNegative(keepaliveTime, "keepaliveTime");
    requireNonNegative(frontendKeepaliveTime, "frontendKeepaliveTime");
    proxyStrategies = List.copyOf(proxyStrategies);
    if (proxyStrategies.isEmpty()) {
      throw new IllegalArgumentException("proxyStrategies: [] (expected: at least one)");
    }
    if (xfrChannelSize < 1) {
      throw new IllegalArgumentException("xfrChannelSize: " + xfrChannelSize + " (expected: > 0)");
    }
    if (connectionQueueBytes < 1) {
      throw new IllegalArgumentException("connectionQueueBytes: " + connectionQueueBytes + " (expected: > 0)");
    }
    requireNonNegative(backendDialTimeout, "backendDialTimeout");
    requireNonNegative(headerReadTimeout, "headerReadTimeout");
    if (headerReadTimeout.isZero()) {
      throw new IllegalArgumentException("headerReadTimeout: 0 (expected: > 0)");
    }
    if (agentTokenAuth != null && agentTls != null && agentTls.clientCa() != null) {
      throw new IllegalArgumentException(
          "agentTokenAuth and an agent client CA are exclusive (expected: --agent-namespace or --cluster-ca-cert, not both)");
    }
    requireText(leaseNamespace, "leaseNamespace");
    leaseLabels = Map.copyOf(leaseLabels);
    requireNonNegative(gracefulShutdownTimeout, "gracefulShutdownTimeout");
    checkPort(grpcFrontendPort, "grpcFrontendPort", true);
    if (flowControlWindow < 0 || flowControlWindow > MAX_FLOW_CONTROL_WINDOW) {
      throw new IllegalArgumentException("flowControlWindow: " + flowControlWindow
          + " (expected: 0 (off) or 1.." + MAX_FLOW_CONTROL_WINDOW + ")");
    }
    if (enableContentionProfiling && !enableProfiling) {
      throw new IllegalArgumentException(
          "if --enable-contention-profiling is set, --enable-profiling must also be set");
    }
    if (maxPendingHeads < 1) {
      throw new IllegalArgumentException("maxPendingHeads: " + maxPendingHeads + " (expected: > 0)");
    }
    if (grpcFrontendPort >= 0 && mode != FrontendMode.HTTP_CONNECT) {
      throw new IllegalArgumentException(
          "grpcFrontendPort: " + grpcFrontendPort + " (expected: only with mode http-connect; mode grpc serves gRPC on serverPort)");
    }
  }

  /** Largest per-connection credit window: 1 GiB keeps every credit sum inside an int64 with room. */
  public static final long MAX_FLOW_CONTROL_WINDOW = 1L << 30;

  /** True when Portage agents that ask for per-connection flow control get it. */
  public boolean flowControl() {
    return flowControlWindow > 0;
  }

  /** A builder with upstream's defaults and a random server ID. */
  public static Builder builder() {
    return new Builder();
  }

  /** A builder that starts from this config. */
  public Builder toBuilder() {
    return new Builder(this);
  }

  /** {@code k=v[,k2=v2]} as {@code --lease-label} takes it. */
  public static Map<String, String> parseLabels(String s) {
    Map<String, String> out = new LinkedHashMap<>();
    for (String part : s.split(",")) {
      if (part.isBlank()) {
        continue;
      }
      int eq = part.indexOf('=');
      if (eq <= 0) {
        throw new IllegalArgumentException("label: \"" + part + "\" (expected: key=value)");
      }
      out.put(part.substring(0, eq).trim(), part.substring(eq + 1).trim());
    }
    return out;
  }

  private static void checkPort(int port, String name, boolean mayDisable) {
    if (port < (mayDisable ? -1 : 0) || port > 65535) {
      throw new IllegalArgumentException(
          name + ": " + port + " (expected: " + (mayDisable ? "-1 (off) or " : "") + "0..65535)");
    }
  }

  private static void requireText(String v, String name) {
    Objects.requireNonNull(v, name);
    if (v.isBlank()) {
      throw new IllegalArgumentException(name + ": \"\" (expected: non-empty)");
    }
  }

  private static void requireNonNegative(Duration d, String name) {
    Objects.requireNonNull(d, name);
    if (d.isNegative()) {
      throw new IllegalArgumentException(name + ": " + d + " (expected: >= 0)");
    }
  }

  /** Mutable builder; not thread-safe. */
  public static final class Builder {
    private String serverId = UUID.randomUUID().toString();
    private int serverCount = 1;
    private FrontendMode mode = FrontendMode.GRPC;
    private String serverBindAddress = "";
    private int serverPort = 8090;
    private Path udsName;
    private boolean deleteExistingUdsFile = true;
    private TlsFiles frontendTls;
    private String agentBindAddress = "";
    private int agentPort = 8091;
    private TlsFiles agentTls;
    private String tlsMinVersion;
    private List<String> cipherSuites = List.of();
    private List<String> keyExchangeGroups = List.of();
    private String healthBindAddress = "";
    private int healthPort = 8092;
    private String adminBindAddress = "127.0.0.1";
    private int adminPort = 8095;
    private Duration keepaliveTime = Duration.ofHours(1);
    private Duration frontendKeepaliveTime = Duration.ofHours(1);
    private List<ProxyStrategy> proxyStrategies = List.of(ProxyStrategy.DEFAULT);
    private int xfrChannelSize = 10;
    private long connectionQueueBytes = 4L << 20;
    private Duration backendDialTimeout = Duration.ZERO;
    private Duration headerReadTimeout = Duration.ofSeconds(60);
    private AgentTokenAuth agentTokenAuth;
    private boolean enableLeaseController;
    private String leaseNamespace = "kube-system";
    private Map<String, String> leaseLabels = Map.of("k8s-app", "konnectivity-server");
    private Duration gracefulShutdownTimeout = Duration.ZERO;
    private int grpcFrontendPort = -1;
    private long flowControlWindow = 4L << 20;
    private int maxPendingHeads = 1024;
    private boolean enableProfiling;
    private boolean enableContentionProfiling;

    private Builder() {}

    private Builder(TunnelServerConfig c) {
      serverId = c.serverId;
      serverCount = c.serverCount;
      mode = c.mode;
      serverBindAddress = c.serverBindAddress;
      serverPort = c.serverPort;
      udsName = c.udsName;
      deleteExistingUdsFile = c.deleteExistingUdsFile;
      frontendTls = c.frontendTls;
      agentBindAddress = c.agentBindAddress;
      agentPort = c.agentPort;
      agentTls = c.agentTls;
      tlsMinVersion = c.tlsMinVersion;
      cipherSuites = c.cipherSuites;
      keyExchangeGroups = c.keyExchangeGroups;
      healthBindAddress = c.healthBindAddress;
      healthPort = c.healthPort;
      adminBindAddress = c.adminBindAddress;
      adminPort = c.adminPort;
      keepaliveTime = c.keepaliveTime;
      frontendKeepaliveTime = c.frontendKeepaliveTime;
      proxyStrategies = c.proxyStrategies;
      xfrChannelSize = c.xfrChannelSize;
      connectionQueueBytes = c.connectionQueueBytes;
      backendDialTimeout = c.backendDialTimeout;
      headerReadTimeout = c.headerReadTimeout;
      agentTokenAuth = c.agentTokenAuth;
      enableLeaseController = c.enableLeaseController;
      leaseNamespace = c.leaseNamespace;
      leaseLabels = c.leaseLabels;
      gracefulShutdownTimeout = c.gracefulShutdownTimeout;
      grpcFrontendPort = c.grpcFrontendPort;
      flowControlWindow = c.flowControlWindow;
      maxPendingHeads = c.maxPendingHeads;
      enableProfiling = c.enableProfiling;
      enableContentionProfiling = c.enableContentionProfiling;
    }

    /** Ephemeral ports everywhere, loopback binds: what tests start. */
    public Builder ephemeralPorts() {
      serverBindAddress = "127.0.0.1";
      agentBindAddress = "127.0.0.1";
      healthBindAddress = "127.0.0.1";
      serverPort = 0;
      agentPort = 0;
      healthPort = 0;
      adminPort = -1;
      return this;
    }

    public Builder serverId(String v) { serverId = v; return this; }
    public Builder serverCount(int v) { serverCount = v; return this; }
    public Builder mode(FrontendMode v) { mode = v; return this; }
    public Builder serverBindAddress(String v) { serverBindAddress = v; return this; }
    public Builder serverPort(int v) { serverPort = v; return this; }
    public Builder udsName(Path v) { udsName = v; return this; }
    public Builder deleteExistingUdsFile(boolean v) { deleteExistingUdsFile = v; return this; }
    public Builder frontendTls(TlsFiles v) { frontendTls = v; return this; }
    public Builder agentBindAddress(String v) { agentBindAddress = v; return this; }
    public Builder agentPort(int v) { agentPort = v; return this; }
    public Builder agentTls(TlsFiles v) { agentTls = v; return this; }
    public Builder tlsMinVersion(String v) { tlsMinVersion = v; return this; }
    public Builder cipherSuites(List<String> v) { cipherSuites = v; return this; }
    /** Key-exchange groups of every TLS listener, in preference order; empty = the provider's default. */
    public Builder keyExchangeGroups(List<String> v) { keyExchangeGroups = v; return this; }
    public Builder healthBindAddress(String v) { healthBindAddress = v; return this; }
    public Builder healthPort(int v) { healthPort = v; return this; }
    public Builder adminBindAddress(String v) { adminBindAddress = v; return this; }
    public Builder adminPort(int v) { adminPort = v; return this; }
    public Builder keepaliveTime(Duration v) { keepaliveTime = v; return this; }
    public Builder frontendKeepaliveTime(Duration v) { frontendKeepaliveTime = v; return this; }
    public Builder proxyStrategies(List<ProxyStrategy> v) { proxyStrategies = v; return this; }
    public Builder xfrChannelSize(int v) { xfrChannelSize = v; return this; }
    public Builder connectionQueueBytes(long v) { connectionQueueBytes = v; return this; }
    public Builder backendDialTimeout(Duration v) { backendDialTimeout = v; return this; }
    public Builder headerReadTimeout(Duration v) { headerReadTimeout = v; return this; }
    public Builder agentTokenAuth(AgentTokenAuth v) { agentTokenAuth = v; return this; }
    public Builder enableLeaseController(boolean v) { enableLeaseController = v; return this; }
    public Builder leaseNamespace(String v) { leaseNamespace = v; return this; }
    public Builder leaseLabels(Map<String, String> v) { leaseLabels = v; return this; }
    public Builder gracefulShutdownTimeout(Duration v) { gracefulShutdownTimeout = v; return this; }
    /** Portage only: in http-connect mode, also serve gRPC frontends on this port ({@code -1}: off). */
    public Builder grpcFrontendPort(int v) { grpcFrontendPort = v; return this; }

    /**
     * Portage only: per-connection credit window in bytes toward agents that negotiate flow control
     * ({@code --flow-control-window}); {@code 0} turns flow control off ({@code --flow-control=false}).
     */
    public Builder flowControlWindow(long v) { flowControlWindow = v; return this; }

    /**
     * Portage only: HTTP CONNECT connections that may be sending their request head at once; more are
     * closed at accept, so clients holding partial requests cannot take every file descriptor.
     */
    public Builder maxPendingHeads(int v) { maxPendingHeads = v; return this; }

    /** {@code --enable-profiling}: JFR and thread dumps under {@code /debug/pprof/} on the admin listener. */
    public Builder enableProfiling(boolean v) { enableProfiling = v; return this; }

    /** {@code --enable-contention-profiling}: the recording takes lock contention too (needs profiling). */
    public Builder enableContentionProfiling(boolean v) { enableContentionProfiling = v; return this; }

    public TunnelServerConfig build() {
      return new TunnelServerConfig(
          serverId, serverCount, mode, serverBindAddress, serverPort, udsName, deleteExistingUdsFile,
          frontendTls, agentBindAddress, agentPort, agentTls, tlsMinVersion, cipherSuites, keyExchangeGroups,
          healthBindAddress, healthPort, adminBindAddress, adminPort, keepaliveTime,
          frontendKeepaliveTime, proxyStrategies, xfrChannelSize, connectionQueueBytes,
          backendDialTimeout, headerReadTimeout, agentTokenAuth, enableLeaseController,
          leaseNamespace, leaseLabels, gracefulShutdownTimeout, grpcFrontendPort, flowControlWindow,
          maxPendingHeads, enableProfiling, enableContentionProfiling);
    }
  }
}
