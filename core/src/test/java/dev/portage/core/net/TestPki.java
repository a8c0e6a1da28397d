package dev.portage.core.net;

import io.netty.pkitesting.CertificateBuilder;
import io.netty.pkitesting.X509Bundle;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;

/**
 * A throwaway PKI written as PEM files: a CA, a server certificate for {@code localhost} and a
 * client certificate signed by it, and a second CA with its own client certificate that the first
 * does not trust.
 */
final class TestPki {

  final Path caCert;
  final Path serverCert;
  final Path serverKey;
  final Path clientCert;
  final Path clientKey;
  final Path otherCaCert;
  final Path strangerCert;
  final Path strangerKey;
  final X509Bundle server;

  TestPki(Path dir) throws Exception {
    Instant now = Instant.now().truncatedTo(ChronoUnit.SECONDS);
    CertificateBuilder base =
        new CertificateBuilder()
            .notBefore(now.minus(1, ChronoUnit.HOURS))
            .notAfter(now.plus(1, ChronoUnit.DAYS))
            .ecp256();
    X509Bundle ca =
        base.copy().subject("CN=portage-test-ca").setIsCertificateAuthority(true).buildSelfSigned();
    server =
        base.copy()
            .subject("CN=localhost")
            .addSanDnsName("localhost")
            .addExtendedKeyUsageServerAuth()
            .buildIssuedBy(ca);
    X509Bundle client =
        base.copy().subject("CN=agent-1").addExtendedKeyUsageClientAuth().buildIssuedBy(ca);
    X509Bundle otherCa =
        base.copy().subject("CN=other-ca").setIsCertificateAuthority(true).buildSelfSigned();
    X509Bundle stranger =
        base.copy().subject("CN=stranger").addExtendedKeyUsageClientAuth().buildIssuedBy(otherCa);

    caCert = write(dir.resolve("ca.crt"), ca.getCertificatePEM());
    serverCert = write(dir.resolve("server.crt"), server.getCertificatePathPEM());
    serverKey = write(dir.resolve("server.key"), server.getPrivateKeyPEM());
    clientCert = write(dir.resolve("client.crt"), client.getCertificatePathPEM());
    clientKey = write(dir.resolve("client.key"), client.getPrivateKeyPEM());
    otherCaCert = write(dir.resolve("other-ca.crt"), otherCa.getCertificatePEM());
    strangerCert = write(dir.resolve("stranger.crt"), stranger.getCertificatePathPEM());
    strangerKey = write(dir.resolve("stranger.key"), stranger.getPrivateKeyPEM());
  }

  static Path write(Path file, String text) throws IOException {
    return Files.writeString(file, text);
  }
}
