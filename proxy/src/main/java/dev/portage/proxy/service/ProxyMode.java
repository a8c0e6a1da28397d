package dev.portage.proxy.service;

import java.util.Locale;

/** How the service proxy moves traffic: kube-proxy's {@code --proxy-mode}. */
public enum ProxyMode {
  /** The kernel DNATs each connection to an endpoint (nftables); nothing passes through the proxy. */
  NFTABLES,
  /** The proxy relays each TCP connection through its own listener (nftables redirects ClusterIPs to it). */
  USERSPACE;

  /** The flag value, {@code nftables} or {@code userspace}. */
  public String flag() {
    return name().toLowerCase(Locale.ROOT);
  }
}
