package dev.portage.proxy.service;

import io.netty.util.NetUtil;
import java.net.InetAddress;
import java.net.UnknownHostException;

/** IP literals to addresses without a DNS lookup. */
final class InetAddresses {

  private InetAddresses() {}

  /**
   * The address {@code ip} spells.
   *
   * @throws IllegalArgumentException if it is not an IP literal
   */
  static InetAddress forIpv4(String ip) {
    byte[] bytes = NetUtil.createByteArrayFromIpAddressString(ip);
    if (bytes == null) {
      throw new IllegalArgumentException("ip: " + ip + " (expected: an IP address)");
    }
    try {
      return InetAddress.getByAddress(bytes);
    } catch (UnknownHostException e) {
      throw new IllegalStateException("4 or 16 bytes are always an address", e);
    }
  }
}
