package dev.portage.tunnel.interop;

import io.netty.pkitesting.CertificateBuilder;
import io.netty.pkitesting.X509Bundle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;

/**
 * A throwaway CA with a {@code localhost} server certificate and an agent client certificate
 * (CN=interop-agent) as PEM files, read by both the Go peer and Portage.
 */
final class InteropPki {
  static final String AGENT_CN = "interop-agent";
  final Path caCert;
  final Path serverCert;
  final Path serverKey;
  final Path agentCert;
  final Path agentKey;

  InteropPki(Path dir) throws Exception {
    Instant now = Instant.now().truncatedTo(ChronoUnit.SECONDS);
    CertificateBuilder base = new CertificateBuilder()
        .notBefore(now.minus(1, ChronoUnit.HOURS))
        .notAfter(now.plus(1, ChronoUnit.DAYS))
        .ecp256();
    X509Bundle ca = base.copy().subject("CN=interop-ca").setIsCertificateAuthority(true).buildSelfSigned();
    X509Bundle server = base.copy().subject("CN=localhost").addSanDnsName("localhost")
        .addExtendedKeyUsageServerAuth().buildIssuedBy(ca);
    X509Bundle agent = base.copy().subject("CN=" + AGENT_CN).addExtendedKeyUsageClientAuth().buildIssuedBy(ca);
    caCert = Files.writeString(dir.resolve("ca.crt"), ca.getCertificatePEM());
    serverCert = Files.writeString(dir.resolve("server.crt"), server.getCertificatePathPEM());
    serverKey = Files.writeString(dir.resolve("server.key"), server.getPrivateKeyPEM());
    agentCert = Files.writeString(dir.resolve("agent.crt"), agent.getCertificatePathPEM());
    agentKey = Files.writeString(dir.resolve("agent.key"), agent.getPrivateKeyPEM());
  }
}
