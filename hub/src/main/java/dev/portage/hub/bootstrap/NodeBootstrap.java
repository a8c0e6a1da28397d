package dev.portage.hub.bootstrap;

import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * Where the hub finds its credentials to the API servers besides the explicit TLS flags, in
 * YurtHub's terms: its root directory ({@code --root-dir}, whose {@code pki/} holds {@code ca.crt},
 * the client certificate {@code yurthub-current.pem} and the server certificate {@code
 * yurthub-server-current.pem}), a bootstrap kubeconfig ({@code --bootstrap-file}: the cluster CA
 * and a bootstrap token), the bootstrap mode ({@code --bootstrap-mode}: {@code kubeletcertificate}
 * uses the kubelet's client certificate), and pins of the cluster CA's public key ({@code
 * --discovery-token-ca-cert-hash}, {@code sha256:<hex>} as kubeadm writes them). Immutable;
 * validated on construction.
 *
 * @param rootDir the hub's own directory ({@code --root-dir}, /var/lib/yurthub)
 * @param bootstrapFile a kubeconfig to take the CA and token from; null for none
 * @param mode {@code --bootstrap-mode}
 * @param caCertHashes accepted SHA-256 hashes of the CA's SubjectPublicKeyInfo, {@code
 *     sha256:<hex>} (kept in lower case)
 * @param unsafeSkipCaVerification {@code --discovery-token-unsafe-skip-ca-verification}: without
 *     it, at least one hash is required (YurtHub's rule)
 */
public record NodeBootstrap(Path rootDir, Path bootstrapFile, Mode mode, List<String> caCertHashes,
    boolean unsafeSkipCaVerification) {

  /** YurtHub's default root directory. */
  public static final Path DEFAULT_ROOT_DIR = Path.of("/var/lib/yurthub");

  /** Nothing but the default root directory: explicit flags or the JDK trust store. */
  public static final NodeBootstrap NONE =
      new NodeBootstrap(DEFAULT_ROOT_DIR, null, Mode.TOKEN, List.of(), true);

  /** {@code --bootstrap-mode}. */
  public enum Mode {
    /** A bootstrap token (from {@code --join-token} or the bootstrap file). */
    TOKEN,
    /** The kubelet's client certificate, {@code /var/lib/kubelet/pki/kubelet-client-current.pem}. */
    KUBELET_CERTIFICATE;

    /**
     * The mode a flag value names.
     *
     * @throws IllegalArgumentException for anything but {@code token} or {@code kubeletcertificate}
     */
    public static Mode parse(String value) {
      return switch (value) {
        case "token" -> TOKEN;
        case "kubeletcertificate" -> KUBELET_CERTIFICATE;
        default -> throw new IllegalArgumentException(
            "--bootstrap-mode: " + value + " (expected: token or kubeletcertificate)");
      };
    }
  }

  public NodeBootstrap {
    Objects.requireNonNull(rootDir, "rootDir");
    Objects.requireNonNull(mode, "mode");
    caCertHashes = List.copyOf(Objects.requireNonNull(caCertHashes, "caCertHashes")).stream()
        .map(NodeBootstrap::parseHash).toList();
    if (caCertHashes.isEmpty() && !unsafeSkipCaVerification) {
      throw new IllegalArgumentException("--discovery-token-unsafe-skip-ca-verification=false"
          + " without --discovery-token-ca-cert-hash (expected: pin the CA with a hash, or set"
          + " --discovery-token-unsafe-skip-ca-verification=true)");
    }
  }

  /** The hub's {@code pki} directory under the root directory. */
  public Path pkiDir() {
    return rootDir.resolve("pki");
  }

  /** {@code sha256:<64 hex digits>}, the digits in lower case. */
  private static String parseHash(String hash) {
    String h = hash.trim();
    int colon = h.indexOf(':');
    String type = colon < 0 ? "" : h.substring(0, colon).toLowerCase(Locale.ROOT);
    String hex = colon < 0 ? h : h.substring(colon + 1);
    if (!type.equals("sha256") || hex.length() != 64) {
      throw new IllegalArgumentException("--discovery-token-ca-cert-hash: " + hash
          + " (expected: sha256:<64 hex digits>)");
    }
    try {
      HexFormat.of().parseHex(hex);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("--discovery-token-ca-cert-hash: " + hash
          + " (expected: sha256:<64 hex digits>)", e);
    }
    return "sha256:" + hex.toLowerCase(Locale.ROOT);
  }
}
