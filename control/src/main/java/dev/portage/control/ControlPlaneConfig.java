package dev.portage.control;

import dev.portage.control.destination.DestinationConfig;
import dev.portage.control.rules.RuleServerConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

/**
 * Settings of a {@link ControlPlane}, one field per {@code portage control-plane} flag. Immutable;
 * build one with {@link #builder()}.
 *
 * <table>
 *   <caption>Defaults</caption>
 *   <tr><th>field</th><th>flag</th><th>default</th><th>meaning</th></tr>
 *   <tr><td>source</td><td>--source</td><td>FILES</td><td>where objects come from</td></tr>
 *   <tr><td>dir</td><td>--dir</td><td>null</td><td>FILES: the manifest directory; null = the bundled examples</td></tr>
 *   <tr><td>kubeconfig</td><td>--kubeconfig</td><td>null</td><td>KUBERNETES: kubeconfig file; null = in-cluster or ~/.kube/config</td></tr>
 *   <tr><td>grpcBindAddress</td><td>--grpc-bind-address</td><td>0.0.0.0</td><td>address of the gRPC port (RuleService + Destination)</td></tr>
 *   <tr><td>grpcPort</td><td>--grpc-port</td><td>8086</td><td>Linkerd's destination port; 0 picks a free one</td></tr>
 *   <tr><td>tlsCert, tlsKey</td><td>--tls-cert, --tls-key</td><td>null</td><td>TLS on the gRPC port (both or neither)</td></tr>
 *   <tr><td>clientCa</td><td>--client-ca</td><td>null</td><td>require client certificates signed by this CA (mTLS); needs TLS</td></tr>
 *   <tr><td>adminBindAddress</td><td>--admin-bind-address</td><td>127.0.0.1</td><td>address of the admin listener</td></tr>
 *   <tr><td>adminPort</td><td>--admin-port</td><td>9996</td><td>/healthz, /readyz, /metrics, /status (Linkerd destination's admin port)</td></tr>
 *   <tr><td>debounceAfter</td><td>--debounce-after</td><td>100 ms</td><td>quiet time after a rule change before it is pushed</td></tr>
 *   <tr><td>debounceMax</td><td>--debounce-max</td><td>1 s</td><td>longest a changing rule type waits</td></tr>
 *   <tr><td>ackTimeout</td><td>--ack-timeout</td><td>30 s</td><td>a dds push not acknowledged within this closes the stream</td></tr>
 *   <tr><td>requireAuth</td><td>--require-auth</td><td>false</td><td>refuse dds clients without a client certificate or a valid token</td></tr>
 *   <tr><td>destination</td><td>--cluster-domain, --stream-queue-capacity</td><td>cluster.local, 100</td><td>the Destination API's settings ({@link DestinationConfig})</td></tr>
 * </table>
 */
public record ControlPlaneConfig(
    SourceType source,
    Path dir,
    Path kubeconfig,
    String grpcBindAddress,
    int grpcPort,
    Path tlsCert,
    Path tlsKey,
    Path clientCa,
    String adminBindAddress,
    int adminPort,
    Duration debounceAfter,
    Duration debounceMax,
    Duration ackTimeout,
    boolean requireAuth,
    DestinationConfig destination) {

  /** Where the control plane's objects come from. */
  public enum SourceType {
    /** A directory of YAML manifests ({@link dev.portage.control.source.files.FileSource}). */
    FILES,
    /** A Kubernetes API server ({@link dev.portage.control.source.kubernetes.KubernetesSource}). */
    KUBERNETES
  }

  public static final String DEFAULT_GRPC_BIND_ADDRESS = "0.0.0.0";
  public static final int DEFAULT_GRPC_PORT = 8086;
  public static final String DEFAULT_ADMIN_BIND_ADDRESS = "127.0.0.1";
  public static final int DEFAULT_ADMIN_PORT = 9996;

  public ControlPlaneConfig {
    Objects.requireNonNull(source, "source");
    Objects.requireNonNull(grpcBindAddress, "grpcBindAddress");
    Objects.requireNonNull(adminBindAddress, "adminBindAddress");
    Objects.requireNonNull(destination, "destination");
    checkPort("grpcPort", grpcPort);
    checkPort("adminPort", adminPort);
    if (grpcBindAddress.isEmpty()) {
      throw new IllegalArgumentException("grpcBindAddress: empty (expected: an address such as 0.0.0.0)");
    }
    if (adminBindAddress.isEmpty()) {
      throw new IllegalArgumentException("adminBindAddress: empty (expected: an address such as 127.0.0.1)");
    }
    if (source == SourceType.KUBERNETES && dir != null) {
      throw new IllegalArgumentException("dir: " + dir + " (expected: only with source FILES)");
    }
    if (source == SourceType.FILES && kubeconfig != null) {
      throw new IllegalArgumentException("kubeconfig: " + kubeconfig + " (expected: only with source KUBERNETES)");
    }
    if ((tlsCert == null) != (tlsKey == null)) {
      throw new IllegalArgumentException(
          "tlsCert: " + tlsCert + ", tlsKey: " + tlsKey + " (expected: both or neither)");
    }
    if (clientCa != null && tlsCert == null) {
      throw new IllegalArgumentException("clientCa: " + clientCa + " (expected: together with tlsCert and tlsKey)");
    }
    // The rule server owns the rules for these three; validate them the same way, up front.
    new RuleServerConfig(
        Objects.requireNonNull(debounceAfter, "debounceAfter"),
        Objects.requireNonNull(debounceMax, "debounceMax"),
        Objects.requireNonNull(ackTimeout, "ackTimeout"),
        RuleServerConfig.DEFAULT_QUEUE_LIMIT,
        requireAuth,
        RuleServerConfig.DEFAULT_ROOT_NAMESPACE);
  }

  private static void checkPort(String name, int port) {
    if (port < 0 || port > 65535) {
      throw new IllegalArgumentException(name + ": " + port + " (expected: 0..65535)");
    }
  }

  /** Whether the gRPC port speaks TLS. */
  public boolean tls() {
    return tlsCert != null;
  }

  /** The rule server settings these flags describe. */
  public RuleServerConfig ruleServerConfig() {
    return RuleServerConfig.defaults()
        .withDebounce(debounceAfter, debounceMax)
        .withAckTimeout(ackTimeout)
        .withRequireAuth(requireAuth);
  }

  /** A builder holding the defaults of the table above. */
  public static Builder builder() {
    return new Builder();
  }

  /** Collects settings; {@link #build()} validates them. Not thread-safe. */
  public static final class Builder {
    private SourceType source = SourceType.FILES;
    private Path dir;
    private Path kubeconfig;
    private String grpcBindAddress = DEFAULT_GRPC_BIND_ADDRESS;
    private int grpcPort = DEFAULT_GRPC_PORT;
    private Path tlsCert;
    private Path tlsKey;
    private Path clientCa;
    private String adminBindAddress = DEFAULT_ADMIN_BIND_ADDRESS;
    private int adminPort = DEFAULT_ADMIN_PORT;
    private Duration debounceAfter = RuleServerConfig.DEFAULT_DEBOUNCE_AFTER;
    private Duration debounceMax = RuleServerConfig.DEFAULT_DEBOUNCE_MAX;
    private Duration ackTimeout = RuleServerConfig.DEFAULT_ACK_TIMEOUT;
    private boolean requireAuth;
    private DestinationConfig destination = DestinationConfig.defaults();

    private Builder() {}

    public Builder source(SourceType source) {
      this.source = source;
      return this;
    }

    /** FILES: the manifest directory; null for the bundled examples. */
    public Builder dir(Path dir) {
      this.dir = dir;
      return this;
    }

    /** KUBERNETES: the kubeconfig; null for fabric8's default (in-cluster, $KUBECONFIG, ~/.kube/config). */
    public Builder kubeconfig(Path kubeconfig) {
      this.kubeconfig = kubeconfig;
      return this;
    }

    public Builder grpcBindAddress(String address) {
      this.grpcBindAddress = address;
      return this;
    }

    public Builder grpcPort(int port) {
      this.grpcPort = port;
      return this;
    }

    /** TLS on the gRPC port; {@code clientCa} (nullable) turns on mutual TLS. */
    public Builder tls(Path cert, Path key, Path clientCa) {
      this.tlsCert = cert;
      this.tlsKey = key;
      this.clientCa = clientCa;
      return this;
    }

    public Builder adminBindAddress(String address) {
      this.adminBindAddress = address;
      return this;
    }

    public Builder adminPort(int port) {
      this.adminPort = port;
      return this;
    }

    public Builder debounce(Duration after, Duration max) {
      this.debounceAfter = after;
      this.debounceMax = max;
      return this;
    }

    public Builder ackTimeout(Duration timeout) {
      this.ackTimeout = timeout;
      return this;
    }

    public Builder requireAuth(boolean require) {
      this.requireAuth = require;
      return this;
    }

    /** The Destination API's settings (cluster domain, per-stream queue). */
    public Builder destination(DestinationConfig destination) {
      this.destination = destination;
      return this;
    }

    /**
     * The validated settings.
     *
     * @throws IllegalArgumentException naming the first bad setting
     */
    public ControlPlaneConfig build() {
      return new ControlPlaneConfig(
          source, dir, kubeconfig, grpcBindAddress, grpcPort, tlsCert, tlsKey, clientCa, adminBindAddress,
          adminPort, debounceAfter, debounceMax, ackTimeout, requireAuth, destination);
    }
  }
}
