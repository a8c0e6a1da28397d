package dev.portage.proxy.service.model;

import java.util.Locale;

/** A Service port's transport protocol, as Kubernetes names it. */
public enum Protocol {
  TCP,
  UDP,
  SCTP;

  /** The protocol's name in nftables rules ({@code tcp}, {@code udp}, {@code sctp}). */
  public String nft() {
    return name().toLowerCase(Locale.ROOT);
  }

  /**
   * The protocol a Service or EndpointSlice port names; Kubernetes defaults a missing one to TCP.
   *
   * @throws IllegalArgumentException for any other name
   */
  public static Protocol of(String name) {
    if (name == null || name.isEmpty()) {
      return TCP;
    }
    try {
      return valueOf(name);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("protocol: " + name + " (expected: TCP, UDP or SCTP)", e);
    }
  }
}
