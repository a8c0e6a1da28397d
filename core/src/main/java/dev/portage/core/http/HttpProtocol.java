package dev.portage.core.http;

/** The wire protocol of one HTTP connection: HTTP/1.1 or cleartext HTTP/2 with prior knowledge. */
public enum HttpProtocol {
  /** HTTP/1.1 with keep-alive. */
  HTTP_1_1,
  /** HTTP/2 over cleartext TCP, started with the connection preface (no Upgrade dance). */
  H2C
}
