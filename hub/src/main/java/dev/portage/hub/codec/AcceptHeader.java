package dev.portage.hub.codec;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Content negotiation for answers the hub makes itself (from its cache): which of its encodings a
 * request's {@code Accept} header allows, in the client's order, the way kube-apiserver reads it.
 * client-go sends {@code application/vnd.kubernetes.protobuf,application/json} (protobuf
 * preferred), kube-proxy {@code application/vnd.kubernetes.protobuf, *}{@code /*}, kubectl and
 * dynamic clients {@code application/json} (with {@code ;as=Table} entries first, which the hub
 * cannot make and skips). No header, {@code *}{@code /*} and {@code application/*} mean JSON, the
 * API server's first serializer. Stateless.
 */
public final class AcceptHeader {

  private AcceptHeader() {}

  /**
   * The encodings {@code accept} allows, most preferred first; empty when it allows none of them
   * (the answer is then 406 NotAcceptable).
   */
  public static List<Encoding> acceptable(String accept) {
    List<Encoding> out = new ArrayList<>(2);
    if (accept == null || accept.isBlank()) {
      out.add(Encoding.JSON);
      return out;
    }
    for (String range : accept.split(",")) {
      String[] parts = range.split(";");
      String type = parts[0].trim().toLowerCase(Locale.ROOT);
      if (type.isEmpty() || hasConversion(parts) || hasZeroQuality(parts)) {
        continue;
      }
      Encoding e = switch (type) {
        case "application/vnd.kubernetes.protobuf" -> Encoding.PROTOBUF;
        case "application/json", "*/*", "application/*" -> Encoding.JSON;
        default -> null;
      };
      if (e != null && !out.contains(e)) {
        out.add(e);
      }
    }
    return out;
  }

  /** {@code ;as=Table;g=meta.k8s.io;v=v1} asks for a server-side conversion the hub cannot make. */
  private static boolean hasConversion(String[] parts) {
    for (int i = 1; i < parts.length; i++) {
      if (parts[i].trim().toLowerCase(Locale.ROOT).startsWith("as=")) {
        return true;
      }
    }
    return false;
  }

  private static boolean hasZeroQuality(String[] parts) {
    for (int i = 1; i < parts.length; i++) {
      String p = parts[i].trim().toLowerCase(Locale.ROOT);
      if (p.startsWith("q=")) {
        try {
          return Double.parseDouble(p.substring(2)) <= 0;
        } catch (NumberFormatException e) {
          return false;
        }
      }
    }
    return false;
  }
}
