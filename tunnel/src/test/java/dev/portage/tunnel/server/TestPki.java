package dev.portage.tunnel.server;

import io.netty.pkitesting.CertificateBuilder;
import io.netty.pkitesting.X509Bundle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;

/**
 * A throwaway CA with a {@code localhost} server certificate and an agent client certificate, as PEM
 * files (read by Portage and by the grpc-go interop peer alike).
 */
public final class TestPki {
  /** The client certificate's common name unless a test names another. */
  public static final String CLIENT_CN = "agent-1";
  public final Path caCert;
  public final Path serverCert;
  public final Path serverKey;
  public final Path clientCert;
  public final Path clientKey;

  public TestPki(Path dir) throws Exception {
    this(dir, CLIENT_CN);
  }

  public TestPki(Path dir, String clientCn) throws Exception {
    Instant now = Instant.now().truncatedTo(ChronoUnit.SECONDS);
    CertificateBuilder base = new CertificateBuilder()
        .notBefore(now.minus(1, ChronoUnit.HOURS))
        .notAfter(now.plus(1, ChronoUnit.DAYS))
        .ecp256();
    X509Bundle ca = base.copy().subject("CN=tunnel-test-ca").setIsCertificateAuthority(true).buildSelfSigned();
    X509Bundle server = base.copy().subject("CN=localhost").addSanDnsName("localhost")
        .addExtendedKeyUsageServerAuth().buildIssuedBy(ca);
    X509Bundle client = base.copy().subject("CN=" + clientCn).addExtendedKeyUsageClientAuth().buildIssuedBy(ca);
    caCert = Files.writeString(dir.resolve("ca.crt"), ca.getCertificatePEM());
    serverCert = Files.writeString(dir.resolve("server.crt"), server.getCertificatePathPEM());
    serverKey = Files.writeString(dir.resolve("server.key"), server.getPrivateKeyPEM());
    clientCert = Files.writeString(dir.resolve("client.crt"), client.getCertificatePathPEM());
    clientKey = Files.writeString(dir.resolve("client.key"), client.getPrivateKeyPEM());
  }
}
