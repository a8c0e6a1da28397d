package dev.portage.control.destination;

import dev.portage.api.linkerd.net.IPAddress;
import dev.portage.api.linkerd.net.IPv6;
import dev.portage.api.linkerd.net.TcpAddress;
import io.netty.util.NetUtil;

/**
 * Encodes an IP literal and port as a {@code net.TcpAddress}: IPv4 as one big-endian fixed32, IPv6 as
 * two big-endian fixed64 halves. Never resolves names.
 */
final class ProtoAddress {

  private ProtoAddress() {}

  /** The encoded address, or null if {@code ip} is not an IP literal. */
  static TcpAddress of(String ip, int port) {
    byte[] b = NetUtil.createByteArrayFromIpAddressString(ip);
    if (b == null) {
      return null;
    }
    IPAddress.Builder a = IPAddress.newBuilder();
    if (b.length == 4) {
      a.setIpv4(readInt(b, 0));
    } else {
      a.setIpv6(IPv6.newBuilder().setFirst(readLong(b, 0)).setLast(readLong(b, 8)));
    }
    return TcpAddress.newBuilder().setIp(a).setPort(port).build();
  }

  private static int readInt(byte[] b, int off) {
    return (b[off] & 0xff) << 24 | (b[off + 1] & 0xff) << 16 | (b[off + 2] & 0xff) << 8 | (b[off + 3] & 0xff);
  }

  private static long readLong(byte[] b, int off) {
    return (long) readInt(b, off) << 32 | (readInt(b, off + 4) & 0xffff_ffffL);
  }
}
