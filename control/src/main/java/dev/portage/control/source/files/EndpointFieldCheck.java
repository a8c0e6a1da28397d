package dev.portage.control.source.files;

import com.fasterxml.jackson.databind.JsonNode;
import dev.portage.control.source.Kinds;
import io.netty.util.NetUtil;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The address and port fields of the objects the Destination API serves from, checked as the
 * Kubernetes API server would check them: an EndpointSlice's {@code addressType}, each endpoint's
 * {@code addresses} (IPv4 or IPv6 literals of that type, or DNS names for FQDN) and {@code ports[].port},
 * a Service's {@code spec.ports[].port} and {@code targetPort}. Without this a mistyped address is
 * skipped in silence and a service loses an endpoint nobody knows about. Stateless.
 */
final class EndpointFieldCheck {

  /**
   * What is wrong and where.
   *
   * @param pointer JSON pointer of the bad value in the object ({@code /endpoints/0/addresses/1}), or
   *     of the nearest value that exists when a field is missing
   * @param message what is wrong, starting with the field's path ({@code endpoints[0].addresses[1]: ...})
   */
  record Problem(String pointer, String message) {}

  private static final Set<String> ADDRESS_TYPES = Set.of("IPv4", "IPv6", "FQDN");
  private static final Set<String> PROTOCOLS = Set.of("TCP", "UDP", "SCTP");
  /** A DNS-1123 subdomain: what an FQDN slice's addresses must be. */
  private static final Pattern DNS_NAME =
      Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
  /** An IANA service name: what a named targetPort must be. */
  private static final Pattern PORT_NAME = Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?");

  private EndpointFieldCheck() {}

  /** The first problem of {@code obj} (of {@code kind}), or null when its addresses and ports are valid. */
  static Problem check(String kind, JsonNode obj) {
    if (kind.equals(Kinds.ENDPOINT_SLICE)) {
      return slice(obj);
    }
    if (kind.equals(Kinds.SERVICE)) {
      return service(obj);
    }
    return null;
  }

  private static Problem slice(JsonNode slice) {
    JsonNode type = slice.path("addressType");
    if (!type.isTextual() || !ADDRESS_TYPES.contains(type.asText())) {
      return new Problem(type.isMissingNode() ? "" : "/addressType",
          "addressType: " + shown(type) + " (expected: IPv4, IPv6 or FQDN)");
    }
    String addressType = type.asText();
    JsonNode endpoints = slice.path("endpoints");
    if (!endpoints.isMissingNode() && !endpoints.isNull() && !endpoints.isArray()) {
      return new Problem("/endpoints", "endpoints: " + shown(endpoints) + " (expected: a list)");
    }
    for (int i = 0; i < endpoints.size(); i++) {
      JsonNode addresses = endpoints.get(i).path("addresses");
      String at = "/endpoints/" + i;
      if (!addresses.isArray() || addresses.isEmpty()) {
        return new Problem(addresses.isMissingNode() ? at : at + "/addresses",
            path(at) + ".addresses: " + shown(addresses) + " (expected: a list of at least one address)");
      }
      for (int j = 0; j < addresses.size(); j++) {
        JsonNode a = addresses.get(j);
        if (!isAddress(a, addressType)) {
          return new Problem(at + "/addresses/" + j, path(at) + ".addresses[" + j + "]: " + shown(a)
              + " (expected: " + (addressType.equals("FQDN") ? "a DNS name" : "an " + addressType + " address") + ")");
        }
      }
    }
    JsonNode ports = slice.path("ports");
    for (int k = 0; k < ports.size(); k++) {
      JsonNode p = ports.get(k);
      String at = "/ports/" + k;
      JsonNode port = p.path("port");
      if (!port.isMissingNode() && !port.isNull() && !isPort(port)) {
        return new Problem(at + "/port", path(at) + ".port: " + shown(port) + " (expected: 1..65535)");
      }
      JsonNode protocol = p.path("protocol");
      if (!protocol.isMissingNode() && !PROTOCOLS.contains(protocol.asText())) {
        return new Problem(at + "/protocol", path(at) + ".protocol: " + shown(protocol) + " (expected: TCP, UDP or SCTP)");
      }
    }
    return null;
  }

  private static Problem service(JsonNode service) {
    JsonNode ports = service.path("spec").path("ports");
    for (int k = 0; k < ports.size(); k++) {
      JsonNode p = ports.get(k);
      String at = "/spec/ports/" + k;
      if (!isPort(p.path("port"))) {
        return new Problem(p.has("port") ? at + "/port" : at,
            path(at) + ".port: " + shown(p.path("port")) + " (expected: 1..65535)");
      }
      JsonNode target = p.path("targetPort");
      if (!target.isMissingNode() && !isPort(target)
          && !(target.isTextual() && target.asText().length() <= 15 && PORT_NAME.matcher(target.asText()).matches()
              && target.asText().chars().anyMatch(Character::isLetter))) {
        return new Problem(at + "/targetPort",
            path(at) + ".targetPort: " + shown(target) + " (expected: 1..65535 or a port name)");
      }
    }
    return null;
  }

  private static boolean isAddress(JsonNode a, String type) {
    if (!a.isTextual()) {
      return false;
    }
    String s = a.asText();
    return switch (type) {
      case "IPv4" -> NetUtil.isValidIpV4Address(s) && !hasLeadingZero(s);
      case "IPv6" -> NetUtil.isValidIpV6Address(s) && !s.contains("%") && !s.startsWith("[");
      default -> s.length() <= 253 && DNS_NAME.matcher(s).matches();
    };
  }

  /** {@code 010.0.0.1}: read as octal by some resolvers, refused by the API server. */
  private static boolean hasLeadingZero(String ipv4) {
    for (String part : ipv4.split("\\.")) {
      if (part.length() > 1 && part.charAt(0) == '0') {
        return true;
      }
    }
    return false;
  }

  private static boolean isPort(JsonNode port) {
    return port.isIntegralNumber() && port.asLong() >= 1 && port.asLong() <= 65535;
  }

  /** The value as the message shows it: JSON text, or "missing". */
  private static String shown(JsonNode n) {
    return n.isMissingNode() ? "missing" : n.toString();
  }

  /** {@code /endpoints/0/addresses} as {@code endpoints[0].addresses}. */
  static String path(String pointer) {
    StringBuilder out = new StringBuilder();
    for (String part : pointer.substring(1).split("/")) {
      if (!part.isEmpty() && part.chars().allMatch(Character::isDigit)) {
        out.append('[').append(part).append(']');
      } else {
        out.append(out.isEmpty() ? "" : ".").append(part);
      }
    }
    return out.toString();
  }
}
