package dev.portage.bench.tunnel;

import io.netty.pkitesting.CertificateBuilder;
import io.netty.pkitesting.X509Bundle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;

/**
 * A throwaway CA and one server certificate for {@code localhost} and {@code 127.0.0.1}, as PEM files
 * in one directory, for the harness's TLS routes: the tunnel server's frontend and agent listener and
 * nginx use the same certificate; the agent and the clients trust the CA. {@code ec} is ECDSA P-256,
 * {@code rsa} RSA 2048 (what kubeadm issues).
 *
 * @param dir where {@code ca.crt}, {@code server.crt} and {@code server.key} are
 */
record BenchPki(Path dir) {
  static final String CA = "ca.crt";
  static final String CERT = "server.crt";
  static final String KEY = "server.key";

  /** Writes a new CA and server certificate with keys of {@code algorithm} ({@code ec} or {@code rsa}) to {@code dir}. */
  static BenchPki create(Path dir, String algorithm) throws Exception {
    Instant now = Instant.now().truncatedTo(ChronoUnit.SECONDS);
    CertificateBuilder base = new CertificateBuilder()
        .notBefore(now.minus(1, ChronoUnit.HOURS))
        .notAfter(now.plus(7, ChronoUnit.DAYS));
    switch (algorithm) {
      case "ec" -> base.ecp256();
      case "rsa" -> base.rsa2048();
      default -> throw new IllegalArgumentException("--tls-key " + algorithm + " (expected: ec or rsa)");
    }
    X509Bundle ca = base.copy().subject("CN=tunnel-bench-ca").setIsCertificateAuthority(true).buildSelfSigned();
    X509Bundle server = base.copy().subject("CN=localhost").addSanDnsName("localhost").addSanIpAddress("127.0.0.1")
        .addExtendedKeyUsageServerAuth().buildIssuedBy(ca);
    Files.createDirectories(dir);
    Files.writeString(dir.resolve(CA), ca.getCertificatePEM());
    Files.writeString(dir.resolve(CERT), server.getCertificatePathPEM());
    Files.writeString(dir.resolve(KEY), server.getPrivateKeyPEM());
    return new BenchPki(dir);
  }

  Path ca() {
    return dir.resolve(CA);
  }

  Path cert() {
    return dir.resolve(CERT);
  }

  Path key() {
    return dir.resolve(KEY);
  }
}
