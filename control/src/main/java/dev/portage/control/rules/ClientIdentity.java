package dev.portage.control.rules;

import java.util.Objects;

/**
 * Who a dds client is, as far as the server could tell: its namespace and principal (a SPIFFE-style
 * {@code <trust-domain>/ns/<ns>/sa/<sa>}, without the {@code spiffe://} scheme) and the IP it connected
 * from. Empty strings mean unknown. Immutable.
 */
public record ClientIdentity(String namespace, String principal, String ip) {

  private static final ClientIdentity ANONYMOUS = new ClientIdentity("", "", "");

  public ClientIdentity {
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(principal, "principal");
    Objects.requireNonNull(ip, "ip");
  }

  /** Nothing known. */
  public static ClientIdentity anonymous() {
    return ANONYMOUS;
  }

  /**
   * The identity of a Kubernetes service account.
   *
   * @param trustDomain e.g. {@code cluster.local}
   */
  public static ClientIdentity serviceAccount(String trustDomain, String namespace, String serviceAccount) {
    return new ClientIdentity(namespace, trustDomain + "/ns/" + namespace + "/sa/" + serviceAccount, "");
  }

  /**
   * Parses a SPIFFE ID {@code spiffe://<td>/ns/<ns>/sa/<sa>}.
   *
   * @throws IllegalArgumentException if it is not of that form
   */
  public static ClientIdentity fromSpiffeId(String spiffeId) {
    if (!spiffeId.startsWith("spiffe://")) {
      throw new IllegalArgumentException("SPIFFE ID: " + spiffeId + " (expected: spiffe://<td>/ns/<ns>/sa/<sa>)");
    }
    String rest = spiffeId.substring("spiffe://".length());
    String[] parts = rest.split("/", -1);
    if (parts.length != 5 || parts[0].isEmpty() || !parts[1].equals("ns") || parts[2].isEmpty()
        || !parts[3].equals("sa") || parts[4].isEmpty()) {
      throw new IllegalArgumentException("SPIFFE ID: " + spiffeId + " (expected: spiffe://<td>/ns/<ns>/sa/<sa>)");
    }
    return new ClientIdentity(parts[2], rest, "");
  }

  public ClientIdentity withIp(String newIp) {
    return new ClientIdentity(namespace, principal, newIp);
  }

  public boolean namespaceKnown() {
    return !namespace.isEmpty();
  }
}
