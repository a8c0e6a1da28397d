package dev.portage.proxy.service;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;

/** Parses {@code host:port} and {@code [v6]:port} text into socket addresses. */
final class HostPort {

  private HostPort() {}

  /**
   * The address {@code text} names; the host is resolved now (IP literals need no lookup).
   *
   * @param what the field name for error messages
   * @throws IllegalArgumentException with a message saying what was expected
   */
  static InetSocketAddress parse(String text, String what) {
    if (text == null) {
      throw new IllegalArgumentException(what + ": missing (expected: host:port)");
    }
    int colon = text.lastIndexOf(':');
    if (colon <= 0 || colon == text.length() - 1) {
      throw new IllegalArgumentException(what + ": " + text + " (expected: host:port)");
    }
    String host = text.substring(0, colon);
    if (host.startsWith("[") && host.endsWith("]")) {
      host = host.substring(1, host.length() - 1);
    } else if (host.contains(":")) {
      throw new IllegalArgumentException(what + ": " + text + " (expected: [v6 address]:port)");
    }
    int port;
    try {
      port = Integer.parseInt(text.substring(colon + 1));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(what + ": " + text + " (expected: a numeric port)");
    }
    if (port < 0 || port > 65535) {
      throw new IllegalArgumentException(what + ": " + text + " (expected: port 0..65535)");
    }
    try {
      return new InetSocketAddress(InetAddress.getByName(host), port);
    } catch (UnknownHostException e) {
      throw new IllegalArgumentException(what + ": " + text + " (unknown host " + host + ")");
    }
  }

  /** {@code host:port} (brackets around IPv6), the form endpoint ids and metric labels use. */
  static String format(InetSocketAddress address) {
    String host = address.getAddress() != null ? address.getAddress().getHostAddress() : address.getHostString();
    return (host.contains(":") ? "[" + host + "]" : host) + ":" + address.getPort();
  }
}
