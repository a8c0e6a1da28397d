package dev.portage.tunnel.server;

/** How frontends reach the server ({@code --mode}). */
public enum FrontendMode {
  /** gRPC {@code ProxyService.Proxy}, one stream per tunneled connection. */
  GRPC("grpc"),
  /** HTTP/1.1 {@code CONNECT}, then raw bytes. */
  HTTP_CONNECT("http-connect");

  private final String flagName;

  FrontendMode(String flagName) {
    this.flagName = flagName;
  }

  public String flagName() {
    return flagName;
  }

  /** Parses {@code grpc} or {@code http-connect}. */
  public static FrontendMode of(String name) {
    for (FrontendMode m : values()) {
      if (m.flagName.equals(name)) {
        return m;
      }
    }
    throw new IllegalArgumentException("mode: \"" + name + "\" (expected: grpc or http-connect)");
  }
}
