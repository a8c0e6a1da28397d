package dev.portage.proxy.service.nftables;

import java.util.Objects;

/**
 * A named set or map of the proxy's table, without its elements: {@code add map ip portage
 * service-ips { type ipv4_addr . inet_proto . inet_service : verdict ; }}. Immutable.
 *
 * @param name the set's name
 * @param map whether it is a map (elements carry a value) rather than a set
 * @param spec the text inside the braces: type or typeof, flags, timeout
 */
record SetDeclaration(String name, boolean map, String spec) {

  SetDeclaration {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(spec, "spec");
    if (name.isEmpty() || name.length() > Chain.MAX_NAME_LENGTH) {
      throw new IllegalArgumentException(
          "set name: " + name.length() + " characters (expected: 1.." + Chain.MAX_NAME_LENGTH + ")");
    }
  }

  static SetDeclaration set(String name, String spec) {
    return new SetDeclaration(name, false, spec);
  }

  static SetDeclaration map(String name, String spec) {
    return new SetDeclaration(name, true, spec);
  }

  /** {@code set} or {@code map}, as nft commands name the object. */
  String kind() {
    return map ? "map" : "set";
  }
}
