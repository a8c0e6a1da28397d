package dev.portage.proxy.mesh;

import dev.portage.control.client.ControlPlaneTls;
import dev.portage.core.backoff.BackoffPolicy;
import dev.portage.core.balance.FailureAccrual;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;

/**
 * Settings of a {@link Sidecar}; the CLI maps its flags (and Linkerd's {@code LINKERD2_PROXY_*}
 * environment variables) onto these fields. Build with {@link #builder(String)}.
 *
 * <table>
 *   <caption>Defaults ({@link #defaults(String)})</caption>
 *   <tr><th>field</th><th>flag</th><th>default</th></tr>
 *   <tr><td>destinationAddr</td><td>--destination-addr</td><td>(required) HOST:PORT of the control plane's gRPC</td></tr>
 *   <tr><td>destinationTls</td><td>--destination-ca, --destination-cert, --destination-key, --destination-server-name</td><td>null: plaintext</td></tr>
 *   <tr><td>outboundBindAddress</td><td>--outbound-bind-address</td><td>127.0.0.1</td></tr>
 *   <tr><td>outboundPort</td><td>--outbound-port</td><td>4140</td></tr>
 *   <tr><td>adminBindAddress</td><td>--admin-bind-address</td><td>127.0.0.1</td></tr>
 *   <tr><td>adminPort</td><td>--admin-port</td><td>4191</td></tr>
 *   <tr><td>failfastTimeout</td><td>--failfast-timeout</td><td>3 s</td></tr>
 *   <tr><td>ewmaDefaultRtt</td><td>--ewma-default-rtt</td><td>30 ms</td></tr>
 *   <tr><td>ewmaDecay</td><td>--ewma-decay</td><td>10 s</td></tr>
 *   <tr><td>ewmaFailurePenalty</td><td>--ewma-failure-penalty</td><td>5 s (Linkerd's load-biaser penalty); 0: failures count at their own latency</td></tr>
 *   <tr><td>balancer</td><td>--balancer</td><td>p2c-ewma</td></tr>
 *   <tr><td>failureAccrual</td><td>--failure-accrual and --failure-accrual-consecutive-*</td><td>null: none (Linkerd's default)</td></tr>
 *   <tr><td>connectTimeout</td><td>--connect-timeout</td><td>1 s (Linkerd's outbound)</td></tr>
 *   <tr><td>reconnectBackoff</td><td>--connect-backoff-min/-max/-jitter</td><td>100 ms doubling to 60 s, jitter 0.1 (Linkerd's outbound)</td></tr>
 *   <tr><td>ioThreads</td><td>--io-threads</td><td>0 = one event loop per core</td></tr>
 * </table>
 */
public record SidecarConfig(
    String destinationAddr,
    ControlPlaneTls destinationTls,
    String outboundBindAddress,
    int outboundPort,
    String adminBindAddress,
    int adminPort,
    Duration failfastTimeout,
    Duration ewmaDefaultRtt,
    Duration ewmaDecay,
    Duration ewmaFailurePenalty,
    BalancerKind balancer,
    FailureAccrual.Settings failureAccrual,
    Duration connectTimeout,
    BackoffPolicy reconnectBackoff,
    int ioThreads) {

  /** The endpoint balancer of every destination. */
  public enum BalancerKind {
    /** Power of two choices over peak-EWMA latency (Linkerd's). */
    P2C_EWMA,
    /** Round robin, for comparison runs. */
    ROUND_ROBIN;

    /** The kind named by a flag value: {@code p2c-ewma} or {@code round-robin}. */
    public static BalancerKind fromFlag(String value) {
      return switch (value.toLowerCase(Locale.ROOT)) {
        case "p2c-ewma" -> P2C_EWMA;
        case "round-robin" -> ROUND_ROBIN;
        default ->
            throw new IllegalArgumentException(
                "balancer: " + value + " (expected: p2c-ewma or round-robin)");
      };
    }
  }

  public SidecarConfig {
    Objects.requireNonNull(destinationAddr, "destinationAddr");
    Objects.requireNonNull(outboundBindAddress, "outboundBindAddress");
    Objects.requireNonNull(adminBindAddress, "adminBindAddress");
    Objects.requireNonNull(balancer, "balancer");
    Objects.requireNonNull(reconnectBackoff, "reconnectBackoff");
    int colon = destinationAddr.lastIndexOf(':');
    if (colon <= 0 || colon == destinationAddr.length() - 1) {
      throw new IllegalArgumentException(
          "destinationAddr: \"" + destinationAddr + "\" (expected: HOST:PORT)");
    }
    checkPort("outboundPort", outboundPort);
    checkPort("adminPort", adminPort);
    positive("failfastTimeout", failfastTimeout);
    positive("ewmaDefaultRtt", ewmaDefaultRtt);
    positive("ewmaDecay", ewmaDecay);
    positive("connectTimeout", connectTimeout);
    Objects.requireNonNull(ewmaFailurePenalty, "ewmaFailurePenalty");
    if (ewmaFailurePenalty.isNegative()) {
      throw new IllegalArgumentException("ewmaFailurePenalty: " + ewmaFailurePenalty + " (expected: >= 0)");
    }
    if (ioThreads < 0) {
      throw new IllegalArgumentException(
          "ioThreads: " + ioThreads + " (expected: >= 0, 0 = one per core)");
    }
  }

  /** The defaults of the table above, with the given control plane address. */
  public static SidecarConfig defaults(String destinationAddr) {
    return builder(destinationAddr).build();
  }

  /** A builder starting from the defaults of the table above. */
  public static Builder builder(String destinationAddr) {
    return new Builder(destinationAddr);
  }

  /** A builder starting from these settings. */
  public Builder toBuilder() {
    return new Builder(this);
  }

  /** The same settings listening on the given ports (0 picks free ones; for tests). */
  public SidecarConfig withPorts(int outbound, int admin) {
    return toBuilder().outboundPort(outbound).adminPort(admin).build();
  }

  /** The same settings with another balancer. */
  public SidecarConfig withBalancer(BalancerKind kind) {
    return toBuilder().balancer(kind).build();
  }

  private static void checkPort(String what, int port) {
    if (port < 0 || port > 65535) {
      throw new IllegalArgumentException(what + ": " + port + " (expected: 0..65535)");
    }
  }

  private static void positive(String what, Duration d) {
    Objects.requireNonNull(d, what);
    if (d.isNegative() || d.isZero()) {
      throw new IllegalArgumentException(what + ": " + d + " (expected: > 0)");
    }
  }

  /** Builds a {@link SidecarConfig}; values are checked by {@link #build()}. Not thread-safe. */
  public static final class Builder {
    private String destinationAddr;
    private ControlPlaneTls destinationTls;
    private String outboundBindAddress = "127.0.0.1";
    private int outboundPort = 4140;
    private String adminBindAddress = "127.0.0.1";
    private int adminPort = 4191;
    private Duration failfastTimeout = Duration.ofSeconds(3);
    private Duration ewmaDefaultRtt = Duration.ofMillis(30);
    private Duration ewmaDecay = Duration.ofSeconds(10);
    private Duration ewmaFailurePenalty = Duration.ofSeconds(5);
    private BalancerKind balancer = BalancerKind.P2C_EWMA;
    private FailureAccrual.Settings failureAccrual;
    private Duration connectTimeout = Duration.ofSeconds(1);
    private BackoffPolicy reconnectBackoff = BackoffPolicy.LINKERD;
    private int ioThreads;

    private Builder(String destinationAddr) {
      this.destinationAddr = destinationAddr;
    }

    private Builder(SidecarConfig c) {
      destinationAddr = c.destinationAddr;
      destinationTls = c.destinationTls;
      outboundBindAddress = c.outboundBindAddress;
      outboundPort = c.outboundPort;
      adminBindAddress = c.adminBindAddress;
      adminPort = c.adminPort;
      failfastTimeout = c.failfastTimeout;
      ewmaDefaultRtt = c.ewmaDefaultRtt;
      ewmaDecay = c.ewmaDecay;
      ewmaFailurePenalty = c.ewmaFailurePenalty;
      balancer = c.balancer;
      failureAccrual = c.failureAccrual;
      connectTimeout = c.connectTimeout;
      reconnectBackoff = c.reconnectBackoff;
      ioThreads = c.ioThreads;
    }

    public Builder destinationAddr(String v) {
      destinationAddr = v;
      return this;
    }

    /** TLS to the control plane; null for plaintext. */
    public Builder destinationTls(ControlPlaneTls v) {
      destinationTls = v;
      return this;
    }

    public Builder outboundBindAddress(String v) {
      outboundBindAddress = v;
      return this;
    }

    public Builder outboundPort(int v) {
      outboundPort = v;
      return this;
    }

    public Builder adminBindAddress(String v) {
      adminBindAddress = v;
      return this;
    }

    public Builder adminPort(int v) {
      adminPort = v;
      return this;
    }

    public Builder failfastTimeout(Duration v) {
      failfastTimeout = v;
      return this;
    }

    public Builder ewmaDefaultRtt(Duration v) {
      ewmaDefaultRtt = v;
      return this;
    }

    public Builder ewmaDecay(Duration v) {
      ewmaDecay = v;
      return this;
    }

    public Builder ewmaFailurePenalty(Duration v) {
      ewmaFailurePenalty = v;
      return this;
    }

    public Builder balancer(BalancerKind v) {
      balancer = v;
      return this;
    }

    /** Consecutive-failure accrual; null for none. */
    public Builder failureAccrual(FailureAccrual.Settings v) {
      failureAccrual = v;
      return this;
    }

    public Builder connectTimeout(Duration v) {
      connectTimeout = v;
      return this;
    }

    public Builder reconnectBackoff(BackoffPolicy v) {
      reconnectBackoff = v;
      return this;
    }

    public Builder ioThreads(int v) {
      ioThreads = v;
      return this;
    }

    public SidecarConfig build() {
      return new SidecarConfig(destinationAddr, destinationTls, outboundBindAddress, outboundPort,
          adminBindAddress, adminPort, failfastTimeout, ewmaDefaultRtt, ewmaDecay, ewmaFailurePenalty,
          balancer, failureAccrual, connectTimeout, reconnectBackoff, ioThreads);
    }
  }
}
