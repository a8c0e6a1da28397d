package dev.portage.control.rules;

import java.net.InetAddress;
import java.net.UnknownHostException;

/** CIDR membership of IP literals, without DNS: anything that is not an IP literal never matches. */
final class IpBlock {

  private IpBlock() {}

  /** Whether {@code ip} is inside {@code block} ({@code 10.0.0.0/8}, {@code fd00::/8} or one address). */
  static boolean contains(String block, String ip) {
    int slash = block.indexOf('/');
    byte[] net = literal(slash < 0 ? block : block.substring(0, slash));
    byte[] addr = literal(ip);
    if (net == null || addr == null || net.length != addr.length) {
      return false;
    }
    int bits = net.length * 8;
    if (slash >= 0) {
      try {
        bits = Integer.parseInt(block.substring(slash + 1));
      } catch (NumberFormatException e) {
        return false;
      }
      if (bits < 0 || bits > net.length * 8) {
        return false;
      }
    }
    for (int i = 0; i < net.length && bits > 0; i++, bits -= 8) {
      int mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
      if ((net[i] & mask) != (addr[i] & mask)) {
        return false;
      }
    }
    return true;
  }

  private static byte[] literal(String s) {
    if (s.indexOf(':') >= 0) {
      // With a colon InetAddress parses an IPv6 literal or fails; it never asks DNS.
      try {
        return InetAddress.getByName(s.startsWith("[") ? s : "[" + s + "]").getAddress();
      } catch (UnknownHostException e) {
        return null;
      }
    }
    String[] parts = s.split("\\.", -1);
    if (parts.length != 4) {
      return null;
    }
    byte[] out = new byte[4];
    for (int i = 0; i < 4; i++) {
      String p = parts[i];
      if (p.isEmpty() || p.length() > 3 || !p.chars().allMatch(Character::isDigit)) {
        return null;
      }
      int v = Integer.parseInt(p);
      if (v > 255) {
        return null;
      }
      out[i] = (byte) v;
    }
    return out;
  }
}
