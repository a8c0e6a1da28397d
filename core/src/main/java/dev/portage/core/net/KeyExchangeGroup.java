package dev.portage.core.net;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * A TLS key-exchange group (named group) that Portage lets operators choose, with the names Go,
 * OpenSSL and the IANA registry give it. {@link #of(String)} accepts any of them, case-insensitively.
 */
public enum KeyExchangeGroup {
  /** The post-quantum hybrid (X25519 plus ML-KEM-768); Go 1.24+ and Netty 4.2 prefer it. */
  X25519MLKEM768("X25519MLKEM768", "X25519MLKEM768", "X25519MLKEM768", List.of("X25519MLKEM768")),
  /** Curve25519 ECDH. */
  X25519("x25519", "X25519", "x25519", List.of("X25519")),
  /** NIST P-256. */
  SECP256R1("secp256r1", "P-256", "secp256r1", List.of("CurveP256", "secp256r1", "prime256v1", "P-256")),
  /** NIST P-384. */
  SECP384R1("secp384r1", "P-384", "secp384r1", List.of("CurveP384", "secp384r1", "P-384")),
  /** NIST P-521. */
  SECP521R1("secp521r1", "P-521", "secp521r1", List.of("CurveP521", "secp521r1", "P-521"));

  private final String ianaName;
  private final String openSslName;
  private final String jdkName;
  private final List<String> names;

  KeyExchangeGroup(String ianaName, String openSslName, String jdkName, List<String> names) {
    this.ianaName = ianaName;
    this.openSslName = openSslName;
    this.jdkName = jdkName;
    this.names = names;
  }

  /** The name in the IANA TLS Supported Groups registry, e.g. {@code x25519}, {@code secp256r1}. */
  public String ianaName() {
    return ianaName;
  }

  /** The name BoringSSL/OpenSSL take in a groups list and report for a session, e.g. {@code P-256}. */
  public String openSslName() {
    return openSslName;
  }

  /** The name the JDK's {@code SSLParameters.setNamedGroups} takes. */
  String jdkName() {
    return jdkName;
  }

  /**
   * The group {@code name} denotes: a Go name ({@code X25519MLKEM768, X25519, CurveP256, CurveP384,
   * CurveP521}), an IANA name ({@code secp256r1}) or an OpenSSL name ({@code prime256v1}, {@code
   * P-256}), in any case.
   *
   * @throws IllegalArgumentException naming {@code name} and the accepted names
   */
  public static KeyExchangeGroup of(String name) {
    Objects.requireNonNull(name, "name");
    String wanted = name.trim();
    for (KeyExchangeGroup group : values()) {
      for (String known : group.names) {
        if (known.equalsIgnoreCase(wanted)) {
          return group;
        }
      }
    }
    throw new IllegalArgumentException(
        "unknown key-exchange group \"" + name + "\" (expected: " + acceptedNames() + ")");
  }

  /**
   * The IANA names of the groups {@code names} denote, in the same order, each once.
   *
   * @throws IllegalArgumentException if a name is unknown
   */
  public static List<String> normalise(List<String> names) {
    Set<String> groups = new LinkedHashSet<>();
    for (String name : names) {
      groups.add(of(name).ianaName);
    }
    return List.copyOf(groups);
  }

  /**
   * {@link #normalise(List)} for a setting named {@code setting} (a flag or a config field): null
   * means none, and an unknown name's error starts with the setting's name.
   *
   * @throws IllegalArgumentException naming {@code setting}, the unknown group and the accepted names
   */
  public static List<String> normalise(String setting, List<String> names) {
    if (names == null) {
      return List.of();
    }
    try {
      return normalise(names);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(setting + ": " + e.getMessage(), e);
    }
  }

  /** Every accepted name, comma-separated, for error messages and help. */
  public static String acceptedNames() {
    List<String> all = new ArrayList<>();
    for (KeyExchangeGroup group : values()) {
      for (String known : group.names) {
        if (!all.contains(known)) {
          all.add(known);
        }
      }
    }
    return String.join(", ", all);
  }
}
