package dev.portage.hub.bootstrap;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HexFormat;
import java.util.List;

/**
 * The credentials the hub uses, resolved once at start: each explicit flag wins; else what a
 * YurtHub node already holds. In order:
 *
 * <ul>
 *   <li>CA of the API servers: {@code --ca-file}; the bootstrap kubeconfig's CA (inline data is
 *       written to {@code <root-dir>/pki/ca.crt}, as YurtHub keeps it); {@code pki/ca.crt}; else
 *       the JDK trust store.
 *   <li>Client certificate: {@code --client-cert-file}/{@code --client-key-file}; the bootstrap
 *       kubeconfig's; {@code pki/yurthub-current.pem} (certificate and key in one file); with
 *       {@code --bootstrap-mode=kubeletcertificate}, the kubelet's {@code
 *       /var/lib/kubelet/pki/kubelet-client-current.pem}; else none.
 *   <li>Server certificate of the secure proxy port: {@code --tls-cert-file}/{@code
 *       --tls-private-key-file}; {@code pki/yurthub-server-current.pem}; else the port stays shut.
 *   <li>Bearer token for requests without credentials: {@code --join-token}; the bootstrap
 *       kubeconfig's token; else none.
 * </ul>
 *
 * With {@code --discovery-token-ca-cert-hash}, the CA must be present and one of its certificates'
 * public key must hash to a pinned value, or the hub does not start. Immutable.
 *
 * @param caFile null for the JDK trust store
 * @param clientCertFile null for none (then {@code clientKeyFile} is null too)
 * @param serverCertFile null: no secure proxy port
 * @param token "" for none
 * @param sources where each came from, for the start-up log line
 */
public record NodeCredentials(Path caFile, Path clientCertFile, Path clientKeyFile,
    Path serverCertFile, Path serverKeyFile, String token, String sources) {

  static final String CA = "ca.crt";
  static final String CLIENT = "yurthub-current.pem";
  static final String SERVER = "yurthub-server-current.pem";
  static final Path KUBELET_CLIENT = Path.of("/var/lib/kubelet/pki/kubelet-client-current.pem");

  /** The explicit flags: each null (or "" for the token) when not given. */
  public record Flags(Path caFile, Path clientCertFile, Path clientKeyFile, Path tlsCertFile,
      Path tlsKeyFile, String token) {}

  /**
   * Resolves the credentials of {@code flags} and {@code bootstrap}.
   *
   * @throws IOException if the bootstrap file cannot be read, the CA cannot be stored under the
   *     root directory, or the CA does not match a pinned hash
   */
  public static NodeCredentials resolve(Flags flags, NodeBootstrap bootstrap) throws IOException {
    return resolve(flags, bootstrap, KUBELET_CLIENT);
  }

  static NodeCredentials resolve(Flags flags, NodeBootstrap bootstrap, Path kubeletClient)
      throws IOException {
    Kubeconfig kubeconfig =
        bootstrap.bootstrapFile() == null ? null : Kubeconfig.read(bootstrap.bootstrapFile());
    Path pki = bootstrap.pkiDir();
    List<String> sources = new ArrayList<>();

    Path ca = flags.caFile();
    if (ca != null) {
      sources.add("CA --ca-file");
    } else if (kubeconfig != null && kubeconfig.ca() != null) {
      ca = store(pki.resolve(CA), kubeconfig.ca(), false);
      sources.add("CA from --bootstrap-file");
    } else if (Files.isRegularFile(pki.resolve(CA))) {
      ca = pki.resolve(CA);
      sources.add("CA " + ca);
    }
    if (!bootstrap.caCertHashes().isEmpty()) {
      requirePinned(ca, bootstrap.caCertHashes());
    }

    Path cert = flags.clientCertFile();
    Path key = flags.clientKeyFile();
    if (cert != null) {
      sources.add("client certificate --client-cert-file");
    } else if (kubeconfig != null && kubeconfig.clientCert() != null) {
      cert = store(pki.resolve(CLIENT), concat(kubeconfig.clientCert(), kubeconfig.clientKey()), true);
      key = cert;
      sources.add("client certificate from --bootstrap-file");
    } else if (Files.isRegularFile(pki.resolve(CLIENT))) {
      cert = pki.resolve(CLIENT);
      key = cert;
      sources.add("client certificate " + cert);
    } else if (bootstrap.mode() == NodeBootstrap.Mode.KUBELET_CERTIFICATE) {
      if (!Files.isRegularFile(kubeletClient)) {
        throw new IOException("--bootstrap-mode=kubeletcertificate: the kubelet's client"
            + " certificate " + kubeletClient + " is missing");
      }
      cert = kubeletClient;
      key = kubeletClient;
      sources.add("client certificate " + cert + " (kubeletcertificate)");
    }

    Path serverCert = flags.tlsCertFile();
    Path serverKey = flags.tlsKeyFile();
    if (serverCert == null && Files.isRegularFile(pki.resolve(SERVER))) {
      serverCert = pki.resolve(SERVER);
      serverKey = serverCert;
      sources.add("server certificate " + serverCert);
    }

    String token = flags.token() == null ? "" : flags.token();
    if (!token.isEmpty()) {
      sources.add("token --join-token");
    } else if (kubeconfig != null && !kubeconfig.token().isEmpty()) {
      token = kubeconfig.token();
      sources.add("token from --bootstrap-file");
    }
    return new NodeCredentials(ca, cert, key, serverCert, serverKey, token,
        sources.isEmpty() ? "none" : String.join(", ", sources));
  }

  /** Fails unless a certificate of {@code ca} has a public key whose SHA-256 is in {@code pins}. */
  private static void requirePinned(Path ca, List<String> pins) throws IOException {
    if (ca == null) {
      throw new IOException("--discovery-token-ca-cert-hash: no CA to check (expected: --ca-file,"
          + " a CA in --bootstrap-file, or pki/ca.crt under --root-dir)");
    }
    Collection<? extends Certificate> certs;
    try {
      certs = CertificateFactory.getInstance("X.509")
          .generateCertificates(new ByteArrayInputStream(Files.readAllBytes(ca)));
    } catch (CertificateException e) {
      throw new IOException("CA " + ca + ": not PEM certificates: " + e.getMessage(), e);
    }
    List<String> seen = new ArrayList<>();
    for (Certificate c : certs) {
      String hash = "sha256:" + publicKeyHash(c);
      if (pins.contains(hash)) {
        return;
      }
      seen.add(hash);
    }
    throw new IOException("CA " + ca + " does not match --discovery-token-ca-cert-hash (its public"
        + " keys hash to " + seen + ")");
  }

  /** SHA-256 of the certificate's SubjectPublicKeyInfo, as kubeadm's CA pins are made. */
  static String publicKeyHash(Certificate cert) {
    try {
      return HexFormat.of().formatHex(
          MessageDigest.getInstance("SHA-256").digest(cert.getPublicKey().getEncoded()));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 unsupported by this JVM", e);
    }
  }

  /** Writes {@code bytes} to {@code file} unless it holds them already (temp file + rename). */
  private static Path store(Path file, byte[] bytes, boolean secret) throws IOException {
    if (Files.isRegularFile(file) && Arrays.equals(Files.readAllBytes(file), bytes)) {
      return file;
    }
    try {
      Files.createDirectories(file.getParent());
      Path temp = Files.createTempFile(file.getParent(), ".tmp-", "");
      try {
        if (secret) {
          Files.setPosixFilePermissions(temp, PosixFilePermissions.fromString("rw-------"));
        }
        Files.write(temp, bytes);
        Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      } finally {
        Files.deleteIfExists(temp);
      }
    } catch (IOException e) {
      throw new IOException("cannot store " + file + " (from --bootstrap-file; see --root-dir): "
          + e.getMessage(), e);
    }
    return file;
  }

  private static byte[] concat(byte[] a, byte[] b) {
    byte[] out = Arrays.copyOf(a, a.length + 1 + b.length);
    out[a.length] = '\n';
    System.arraycopy(b, 0, out, a.length + 1, b.length);
    return out;
  }
}
