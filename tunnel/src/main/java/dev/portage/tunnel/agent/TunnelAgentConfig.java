package dev.portage.tunnel.agent;

import dev.portage.core.net.KeyExchangeGroup;
import dev.portage.tunnel.wire.AgentIdentifiers;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.UUID;

/**
 * Everything a {@link TunnelAgent} needs, with upstream proxy-agent flag names and defaults
 * (shared/specs/konnectivity.md). Immutable; build one with {@link #builder()}.
 *
 * <p>TLS: upstream's agent listener is TLS-only, so the agent speaks TLS whenever {@code caCert} is
 * set; with no CA it speaks plaintext (tests, quickstart). A port of {@code -1} disables that listener
 * (health or admin); {@code 0} picks an ephemeral port.
 *
 * @param proxyServerHost {@code --proxy-server-host}, normally a load balancer in front of every server
 * @param proxyServerPort {@code --proxy-server-port}
 * @param agentId {@code --agent-id}
 * @param agentIdentifiers {@code --agent-identifiers}, URL-query form; empty means none are sent
 * @param serviceAccountTokenPath {@code --service-account-token-path}; null means no token auth
 * @param caCert {@code --ca-cert}; null means plaintext
 * @param agentCert {@code --agent-cert} (mTLS client certificate), null for none
 * @param agentKey {@code --agent-key}, null for none
 * @param alpnProtos {@code --alpn-proto}
 * @param keyExchangeGroups Portage only: {@code --tls-key-exchange-groups}, the TLS key-exchange groups
 *     offered to servers in preference order, by IANA name; empty means the provider's default
 * @param healthServerHost {@code --health-server-host}; empty means all interfaces
 * @param healthServerPort {@code --health-server-port}
 * @param adminBindAddress {@code --admin-bind-address}
 * @param adminServerPort {@code --admin-server-port}
 * @param syncInterval {@code --sync-interval}: first delay of the sync backoff
 * @param syncIntervalCap {@code --sync-interval-cap}
 * @param probeInterval {@code --probe-interval}
 * @param keepaliveTime {@code --keepalive-time}
 * @param syncForever {@code --sync-forever}
 * @param xfrChannelSize {@code --xfr-channel-size}: per backend connection queue, in packets
 * @param dialTimeout backend dial timeout (upstream: fixed 5 s)
 * @param countServerLeases {@code --count-server-leases}
 * @param leaseNamespace {@code --lease-namespace}
 * @param leaseLabelSelector {@code --lease-label-selector}
 * @param serverCountSource {@code --server-count-source}
 * @param kubeconfig {@code --kubeconfig}; null means in-cluster or the default kubeconfig
 * @param kubeApiContentType {@code --kube-api-content-type} (the client speaks JSON; see {@code KubeClients})
 * @param enableProfiling {@code --enable-profiling}: JFR and thread dumps under {@code /debug/pprof/} on
 *     the admin listener
 * @param enableContentionProfiling {@code --enable-contention-profiling} (needs {@code enableProfiling})
 * @param flowControlWindow Portage only: per-connection credit window in bytes, offered to servers
 *     through the {@code portage-flow-control} metadata key; 0 turns it off (4 MiB by default)
 */
public record TunnelAgentConfig(
    String proxyServerHost,
    int proxyServerPort,
    String agentId,
    String agentIdentifiers,
    Path serviceAccountTokenPath,
    Path caCert,
    Path agentCert,
    Path agentKey,
    List<String> alpnProtos,
    List<String> keyExchangeGroups,
    String healthServerHost,
    int healthServerPort,
    String adminBindAddress,
    int adminServerPort,
    Duration syncInterval,
    Duration syncIntervalCap,
    Duration probeInterval,
    Duration keepaliveTime,
    boolean syncForever,
    int xfrChannelSize,
    Duration dialTimeout,
    boolean countServerLeases,
    String leaseNamespace,
    String leaseLabelSelector,
    ServerCountSource serverCountSource,
    Path kubeconfig,
    long flowControlWindow,
    String kubeApiContentType,
    boolean enableProfiling,
    boolean enableContentionProfiling) {

  /** Where the agent takes the number of servers it must connect to. */
  public enum ServerCountSource {
    /** Lease count when lease counting is on, else the last {@code servercount} header. */
    DEFAULT("default"),
    /** The larger of the lease count and the last {@code servercount} header. */
    MAX("max");

    private final String flagValue;

    ServerCountSource(String flagValue) {
      this.flagValue = flagValue;
    }

    /** The value as written on the command line. */
    public String flagValue() {
      return flagValue;
    }

    /** Parses a command-line value ({@code default} or {@code max}). */
    public static ServerCountSource fromFlag(String value) {
      for (ServerCountSource s : values()) {
        if (s.flagValue.equals(value)) {
          return s;
        }
      }
      throw new IllegalArgumentException(
          "server-count-source: " + value + " (expected: default or max)");
    }
  }

  public TunnelAgentConfig {
    requireNonEmpty("proxyServerHost", proxyServerHost);
    requirePort("proxyServerPort", proxyServerPort, false);
    requireNonEmpty("agentId", agentId);
    Objects.requireNonNull(agentIdentifiers, "agentIdentifiers");
    AgentIdentifiers.parseStrict(agentIdentifiers);
    Objects.requireNonNull(kubeApiContentType, "kubeApiContentType");
    if (enableContentionProfiling && !enableProfiling) {
      throw new IllegalArgumentException(
          "if --enable-contention-profiling is set, --enable-profiling must also be set");
    }
    alpnProtos = List.copyOf(Objects.requireNonNull(alpnProtos, "alpnProtos"));
    keyExchangeGroups = KeyExchangeGroup.normalise("keyExchangeGroups", keyExchangeGroups);
    Objects.requireNonNull(healthServerHost, "healthServerHost");
    requirePort("healthServerPort", healthServerPort, true);
    requireNonEmpty("adminBindAddress", adminBindAddress);
    requirePort("adminServerPort", adminServerPort, true);
    requirePositive("syncInterval", syncInterval);
    requirePositive("syncIntervalCap", syncIntervalCap);
    if (syncIntervalCap.compareTo(syncInterval) < 0) {
      throw new IllegalArgumentException(
          "syncIntervalCap: " + syncIntervalCap + " (expected: >= syncInterval " + syncInterval + ")");
    }
    requirePositive("probeInterval", probeInterval);
    requirePositive("keepaliveTime", keepaliveTime);
    if (xfrChannelSize <= 0) {
      throw new IllegalArgumentException("xfrChannelSize: " + xfrChannelSize + " (expected: > 0)");
    }
    requirePositive("dialTimeout", dialTimeout);
    requireNonEmpty("leaseNamespace", leaseNamespace);
    Objects.requireNonNull(leaseLabelSelector, "leaseLabelSelector");
    Objects.requireNonNull(serverCountSource, "serverCountSource");
    if (flowControlWindow < 0 || flowControlWindow > MAX_FLOW_CONTROL_WINDOW) {
      throw new IllegalArgumentException("flowControlWindow: " + flowControlWindow
          + " (expected: 0 (off) or 1.." + MAX_FLOW_CONTROL_WINDOW + ")");
    }
    if ((agentCert == null) != (agentKey == null)) {
      throw new IllegalArgumentException(
          "agentCert/agentKey: " + agentCert + "/" + agentKey + " (expected: both or neither)");
    }
    if (agentCert != null && caCert == null) {
      throw new IllegalArgumentException("agentCert: " + agentCert + " (expected: caCert set too, mTLS needs TLS)");
    }
  }

  /** Largest per-connection credit window: 1 GiB keeps every credit sum inside an int64 with room. */
  public static final long MAX_FLOW_CONTROL_WINDOW = 1L << 30;

  /** True when the agent offers per-connection flow control to the servers it connects to. */
  public boolean flowControl() {
    return flowControlWindow > 0;
  }

  /** A builder with every upstream default; the agent ID defaults to a random UUID. */
  public static Builder builder() {
    return new Builder();
  }

  /** A builder holding this config's values. */
  public Builder toBuilder() {
    return new Builder(this);
  }

  /** True when the agent connects with TLS (a CA certificate is configured). */
  public boolean tls() {
    return caCert != null;
  }

  private static void requireNonEmpty(String name, String value) {
    if (value == null || value.isEmpty()) {
      throw new IllegalArgumentException(name + ": " + value + " (expected: non-empty)");
    }
  }

  private static void requirePort(String name, int port, boolean allowDisabled) {
    int min = allowDisabled ? -1 : 0;
    if (port < min || port > 65535) {
      throw new IllegalArgumentException(
          name + ": " + port + " (expected: " + min + ".." + 65535 + ")");
    }
  }

  private static void requirePositive(String name, Duration d) {
    if (d == null || d.isNegative() || d.isZero()) {
      throw new IllegalArgumentException(name + ": " + d + " (expected: > 0)");
    }
  }

  /** Mutable builder of {@link TunnelAgentConfig}; not thread-safe. */
  public static final class Builder {
    private String proxyServerHost = "127.0.0.1";
    private int proxyServerPort = 8091;
    private String agentId = UUID.randomUUID().toString();
    private String agentIdentifiers = "";
    private Path serviceAccountTokenPath;
    private Path caCert;
    private Path agentCert;
    private Path agentKey;
    private List<String> alpnProtos = List.of();
    private List<String> keyExchangeGroups = List.of();
    private String healthServerHost = "";
    private int healthServerPort = 8093;
    private String adminBindAddress = "127.0.0.1";
    private int adminServerPort = 8094;
    private Duration syncInterval = Duration.ofSeconds(1);
    private Duration syncIntervalCap = Duration.ofSeconds(10);
    private Duration probeInterval = Duration.ofSeconds(1);
    private Duration keepaliveTime = Duration.ofHours(1);
    private boolean syncForever;
    private int xfrChannelSize = 150;
    private Duration dialTimeout = Duration.ofSeconds(5);
    private boolean countServerLeases;
    private String leaseNamespace = "kube-system";
    private String leaseLabelSelector = "k8s-app=konnectivity-server";
    private ServerCountSource serverCountSource = ServerCountSource.DEFAULT;
    private Path kubeconfig;
    private String kubeApiContentType = "application/vnd.kubernetes.protobuf";
    private boolean enableProfiling;
    private boolean enableContentionProfiling;
    private long flowControlWindow = 4L << 20;

    private Builder() {}

    private Builder(TunnelAgentConfig c) {
      proxyServerHost = c.proxyServerHost;
      proxyServerPort = c.proxyServerPort;
      agentId = c.agentId;
      agentIdentifiers = c.agentIdentifiers;
      serviceAccountTokenPath = c.serviceAccountTokenPath;
      caCert = c.caCert;
      agentCert = c.agentCert;
      agentKey = c.agentKey;
      alpnProtos = c.alpnProtos;
      keyExchangeGroups = c.keyExchangeGroups;
      healthServerHost = c.healthServerHost;
      healthServerPort = c.healthServerPort;
      adminBindAddress = c.adminBindAddress;
      adminServerPort = c.adminServerPort;
      syncInterval = c.syncInterval;
      syncIntervalCap = c.syncIntervalCap;
      probeInterval = c.probeInterval;
      keepaliveTime = c.keepaliveTime;
      syncForever = c.syncForever;
      xfrChannelSize = c.xfrChannelSize;
      dialTimeout = c.dialTimeout;
      countServerLeases = c.countServerLeases;
      leaseNamespace = c.leaseNamespace;
      leaseLabelSelector = c.leaseLabelSelector;
      serverCountSource = c.serverCountSource;
      kubeconfig = c.kubeconfig;
      kubeApiContentType = c.kubeApiContentType;
      enableProfiling = c.enableProfiling;
      enableContentionProfiling = c.enableContentionProfiling;
      flowControlWindow = c.flowControlWindow;
    }

    public Builder proxyServerHost(String v) { proxyServerHost = v; return this; }
    public Builder proxyServerPort(int v) { proxyServerPort = v; return this; }
    public Builder agentId(String v) { agentId = v; return this; }
    public Builder agentIdentifiers(String v) { agentIdentifiers = v; return this; }
    public Builder serviceAccountTokenPath(Path v) { serviceAccountTokenPath = v; return this; }
    public Builder caCert(Path v) { caCert = v; return this; }
    public Builder agentCert(Path v) { agentCert = v; return this; }
    public Builder agentKey(Path v) { agentKey = v; return this; }
    public Builder alpnProtos(List<String> v) { alpnProtos = v; return this; }
    public Builder keyExchangeGroups(List<String> v) { keyExchangeGroups = v; return this; }
    public Builder healthServerHost(String v) { healthServerHost = v; return this; }
    public Builder healthServerPort(int v) { healthServerPort = v; return this; }
    public Builder adminBindAddress(String v) { adminBindAddress = v; return this; }
    public Builder adminServerPort(int v) { adminServerPort = v; return this; }
    public Builder syncInterval(Duration v) { syncInterval = v; return this; }
    public Builder syncIntervalCap(Duration v) { syncIntervalCap = v; return this; }
    public Builder probeInterval(Duration v) { probeInterval = v; return this; }
    public Builder keepaliveTime(Duration v) { keepaliveTime = v; return this; }
    public Builder syncForever(boolean v) { syncForever = v; return this; }
    public Builder xfrChannelSize(int v) { xfrChannelSize = v; return this; }
    public Builder dialTimeout(Duration v) { dialTimeout = v; return this; }
    public Builder countServerLeases(boolean v) { countServerLeases = v; return this; }
    public Builder leaseNamespace(String v) { leaseNamespace = v; return this; }
    public Builder leaseLabelSelector(String v) { leaseLabelSelector = v; return this; }
    public Builder serverCountSource(ServerCountSource v) { serverCountSource = v; return this; }
    public Builder kubeconfig(Path v) { kubeconfig = v; return this; }
    public Builder kubeApiContentType(String v) { kubeApiContentType = v; return this; }
    public Builder enableProfiling(boolean v) { enableProfiling = v; return this; }
    public Builder enableContentionProfiling(boolean v) { enableContentionProfiling = v; return this; }
    /** Portage only ({@code --flow-control-window}; {@code 0} is {@code --flow-control=false}). */
    public Builder flowControlWindow(long v) { flowControlWindow = v; return this; }

    /** Validates and builds; throws {@link IllegalArgumentException} naming the bad field. */
    public TunnelAgentConfig build() {
      return new TunnelAgentConfig(
          proxyServerHost, proxyServerPort, agentId, agentIdentifiers, serviceAccountTokenPath,
          caCert, agentCert, agentKey, alpnProtos, keyExchangeGroups, healthServerHost, healthServerPort,
          adminBindAddress, adminServerPort, syncInterval, syncIntervalCap, probeInterval,
          keepaliveTime, syncForever, xfrChannelSize, dialTimeout, countServerLeases,
          leaseNamespace, leaseLabelSelector, serverCountSource, kubeconfig, flowControlWindow,
          kubeApiContentType, enableProfiling, enableContentionProfiling);
    }
  }
}
