package dev.portage.control.destination;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * Whether a port is in a Linkerd opaque-ports list: the {@code config.linkerd.io/opaque-ports}
 * annotation ({@code "3306,4000-4100"}) or a JSON array of numbers, strings and ranges. Malformed
 * entries are skipped.
 */
final class OpaquePorts {

  private OpaquePorts() {}

  static boolean contains(JsonNode list, int port) {
    if (list == null || list.isMissingNode() || list.isNull()) {
      return false;
    }
    if (list.isArray()) {
      for (JsonNode n : list) {
        if (n.isInt() ? n.asInt() == port : contains(n.asText(""), port)) {
          return true;
        }
      }
      return false;
    }
    return list.isInt() ? list.asInt() == port : contains(list.asText(""), port);
  }

  static boolean contains(String spec, int port) {
    for (String part : spec.split(",")) {
      String p = part.trim();
      if (p.isEmpty()) {
        continue;
      }
      int dash = p.indexOf('-');
      try {
        if (dash < 0) {
          if (Integer.parseInt(p) == port) {
            return true;
          }
        } else {
          int lo = Integer.parseInt(p.substring(0, dash).trim());
          int hi = Integer.parseInt(p.substring(dash + 1).trim());
          if (port >= lo && port <= hi) {
            return true;
          }
        }
      } catch (NumberFormatException e) {
        // Not a port: skip it, like Linkerd does with a bad entry.
      }
    }
    return false;
  }
}
