package dev.portage.control.rules;

import io.grpc.Status;
import java.net.InetSocketAddress;
import java.security.cert.Certificate;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import javax.net.ssl.SSLPeerUnverifiedException;

/**
 * Decides who a dds peer is, in this order: a client certificate with a SPIFFE ID URI SAN ({@code
 * spiffe://<td>/ns/<ns>/sa/<sa>}); else {@code authorization: Bearer <token>} checked by the {@link
 * TokenAuthenticator} ({@code authorization-type} {@code kubernetes}, the default when absent); else
 * anonymous, unless auth is required. Presented credentials that do not check out always fail. A
 * failed stage carries a {@link io.grpc.StatusException} with {@code UNAUTHENTICATED} and a
 * description for the client. Thread-safe.
 */
final class PeerAuthenticator {

  private static final int SAN_URI = 6;

  private final boolean requireAuth;
  private final TokenAuthenticator tokens;

  /** @param tokens null when bearer tokens cannot be checked */
  PeerAuthenticator(boolean requireAuth, TokenAuthenticator tokens) {
    this.requireAuth = requireAuth;
    this.tokens = tokens;
  }

  CompletionStage<ClientIdentity> authenticate(PeerInfo peer) {
    String ip = ipOf(peer);
    String spiffe;
    try {
      spiffe = spiffeIdOf(peer);
    } catch (IllegalArgumentException e) {
      return failed(e.getMessage());
    }
    if (spiffe != null) {
      try {
        return CompletableFuture.completedFuture(ClientIdentity.fromSpiffeId(spiffe).withIp(ip));
      } catch (IllegalArgumentException e) {
        return failed("client certificate: " + e.getMessage());
      }
    }
    if (peer.authorization() != null) {
      String header = peer.authorization();
      if (!header.regionMatches(true, 0, "Bearer ", 0, 7) || header.substring(7).isBlank()) {
        return failed("authorization: malformed (expected: Bearer <token>)");
      }
      String type = peer.authorizationType() == null ? "kubernetes" : peer.authorizationType();
      if (!type.equals("kubernetes")) {
        return failed("authorization-type: " + type + " (expected: kubernetes)");
      }
      if (tokens == null) {
        return failed("bearer tokens are not accepted here: no token authenticator is configured");
      }
      CompletableFuture<ClientIdentity> out = new CompletableFuture<>();
      tokens
          .authenticate(header.substring(7).trim())
          .whenComplete(
              (id, err) -> {
                if (err != null) {
                  Throwable cause = err.getCause() != null ? err.getCause() : err;
                  out.completeExceptionally(unauthenticated("bearer token: " + cause.getMessage()));
                } else {
                  out.complete(id.withIp(ip));
                }
              });
      return out;
    }
    if (requireAuth) {
      return failed("no credentials (expected: a client certificate with a SPIFFE ID or authorization: Bearer <token>)");
    }
    return CompletableFuture.completedFuture(ClientIdentity.anonymous().withIp(ip));
  }

  /** The SPIFFE ID of the client certificate, null if there is no certificate. */
  private String spiffeIdOf(PeerInfo peer) {
    if (peer.ssl() == null) {
      return null;
    }
    Certificate[] chain;
    try {
      chain = peer.ssl().getPeerCertificates();
    } catch (SSLPeerUnverifiedException e) {
      return null;
    }
    if (chain.length == 0 || !(chain[0] instanceof X509Certificate leaf)) {
      return null;
    }
    Collection<List<?>> sans;
    try {
      sans = leaf.getSubjectAlternativeNames();
    } catch (CertificateParsingException e) {
      throw new IllegalArgumentException("client certificate: unreadable subject alternative names");
    }
    if (sans != null) {
      for (List<?> san : sans) {
        if (san.size() >= 2 && Integer.valueOf(SAN_URI).equals(san.get(0))
            && san.get(1) instanceof String uri && uri.startsWith("spiffe://")) {
          return uri;
        }
      }
    }
    if (requireAuth && peer.authorization() == null) {
      throw new IllegalArgumentException("client certificate has no SPIFFE ID URI SAN");
    }
    return null;
  }

  private static String ipOf(PeerInfo peer) {
    if (peer.remote() instanceof InetSocketAddress a && a.getAddress() != null) {
      String ip = a.getAddress().getHostAddress();
      int scope = ip.indexOf('%');
      return scope < 0 ? ip : ip.substring(0, scope);
    }
    return "";
  }

  private static CompletionStage<ClientIdentity> failed(String why) {
    return CompletableFuture.failedFuture(unauthenticated(why));
  }

  private static io.grpc.StatusException unauthenticated(String why) {
    return Status.UNAUTHENTICATED.withDescription(why).asException();
  }
}
