package dev.portage.hub.codec;

import java.util.Locale;

/**
 * The two encodings of Kubernetes API objects the hub caches and answers in: JSON, and Kubernetes
 * protobuf (the {@code k8s\0} magic plus a {@code runtime.Unknown} envelope; watch streams of
 * length-prefixed {@code WatchEvent} frames). Immutable.
 */
public enum Encoding {
  JSON("application/json", "application/json"),
  PROTOBUF("application/vnd.kubernetes.protobuf", "application/vnd.kubernetes.protobuf;stream=watch");

  private final String contentType;
  private final String watchContentType;

  Encoding(String contentType, String watchContentType) {
    this.contentType = contentType;
    this.watchContentType = watchContentType;
  }

  /** The {@code Content-Type} of a single object or a list in this encoding. */
  public String contentType() {
    return contentType;
  }

  /** The {@code Content-Type} of a watch stream in this encoding, as kube-apiserver sends it. */
  public String watchContentType() {
    return watchContentType;
  }

  /**
   * The encoding of a response body with this {@code Content-Type}, or null when it is neither, or
   * when it is a conversion ({@code ;as=Table}, {@code ;as=PartialObjectMetadata}) rather than the
   * resource itself. A missing type is taken as JSON (what the API server's JSON answers were
   * cached as before protobuf).
   */
  public static Encoding ofContentType(String contentType) {
    if (contentType == null || contentType.isBlank()) {
      return JSON;
    }
    // The API server's own answers, exactly: no split, no lower-casing copies.
    if (contentType.equals(JSON.contentType)) {
      return JSON;
    }
    if (contentType.equals(PROTOBUF.contentType)) {
      return PROTOBUF;
    }
    String[] parts = contentType.split(";");
    for (int i = 1; i < parts.length; i++) {
      String p = parts[i].trim().toLowerCase(Locale.ROOT);
      if (p.startsWith("as=")) {
        return null;
      }
    }
    String type = parts[0].trim().toLowerCase(Locale.ROOT);
    if (type.equals(PROTOBUF.contentType)) {
      return PROTOBUF;
    }
    return type.equals(JSON.contentType) || type.endsWith("+json") ? JSON : null;
  }
}
