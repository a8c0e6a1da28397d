package dev.portage.proxy.mesh;

import java.time.Duration;
import java.util.Locale;
import java.util.Objects;

/**
 * Settings of a {@link Sidecar}; the CLI maps its flags one to one onto these fields.
 *
 * <table>
 *   <caption>Defaults ({@link #defaults(String)})</caption>
 *   <tr><th>field</th><th>flag</th><th>default</th></tr>
 *   <tr><td>destinationAddr</td><td>--destination-addr</td><td>(required) HOST:PORT of the control plane's gRPC</td></tr>
 *   <tr><td>outboundBindAddress</td><td>--outbound-bind-address</td><td>127.0.0.1</td></tr>
 *   <tr><td>outboundPort</td><td>--outbound-port</td><td>4140</td></tr>
 *   <tr><td>adminBindAddress</td><td>--admin-bind-address</td><td>127.0.0.1</td></tr>
 *   <tr><td>adminPort</td><td>--admin-port</td><td>4191</td></tr>
 *   <tr><td>failfastTimeout</td><td>--failfast-timeout</td><td>3 s</td></tr>
 *   <tr><td>ewmaDefaultRtt</td><td>--ewma-default-rtt</td><td>30 ms</td></tr>
 *   <tr><td>ewmaDecay</td><td>--ewma-decay</td><td>10 s</td></tr>
 *   <tr><td>balancer</td><td>--balancer</td><td>p2c-ewma</td></tr>
 *   <tr><td>ioThreads</td><td>--io-threads</td><td>0 = one event loop per core</td></tr>
 * </table>
 */
public record SidecarConfig(
    String destinationAddr,
    String outboundBindAddress,
    int outboundPort,
    String adminBindAddress,
    int adminPort,
    Duration failfastTimeout,
    Duration ewmaDefaultRtt,
    Duration ewmaDecay,
    BalancerKind balancer,
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
    if (ioThreads < 0) {
      throw new IllegalArgumentException(
          "ioThreads: " + ioThreads + " (expected: >= 0, 0 = one per core)");
    }
  }

  /** The defaults of the table above, with the given control plane address. */
  public static SidecarConfig defaults(String destinationAddr) {
    return new SidecarConfig(
        destinationAddr,
        "127.0.0.1",
        4140,
        "127.0.0.1",
        4191,
        Duration.ofSeconds(3),
        Duration.ofMillis(30),
        Duration.ofSeconds(10),
        BalancerKind.P2C_EWMA,
        0);
  }

  /** The same settings listening on the given ports (0 picks free ones; for tests). */
  public SidecarConfig withPorts(int outbound, int admin) {
    return new SidecarConfig(
        destinationAddr, outboundBindAddress, outbound, adminBindAddress, admin, failfastTimeout,
        ewmaDefaultRtt, ewmaDecay, balancer, ioThreads);
  }

  /** The same settings with another balancer. */
  public SidecarConfig withBalancer(BalancerKind kind) {
    return new SidecarConfig(
        destinationAddr, outboundBindAddress, outboundPort, adminBindAddress, adminPort,
        failfastTimeout, ewmaDefaultRtt, ewmaDecay, kind, ioThreads);
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
}
