package dev.portage.tunnel.server;

/** A dial the server could not forward to any agent; the message is the client-facing error text. */
final class DialRefusedException extends Exception {
  DialRefusedException(String message) {
    super(message, null, false, false);
  }
}
