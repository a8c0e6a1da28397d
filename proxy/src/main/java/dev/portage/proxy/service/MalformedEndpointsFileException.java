package dev.portage.proxy.service;

import java.io.IOException;
import java.nio.file.Path;

/** An endpoints file that cannot be used; the message starts with {@code file:line:}. */
final class MalformedEndpointsFileException extends IOException {

  private final Path file;
  private final int line;

  MalformedEndpointsFileException(Path file, int line, String message, Throwable cause) {
    super(file + ":" + line + ": " + message, cause);
    this.file = file;
    this.line = line;
  }

  Path file() {
    return file;
  }

  /** 1-based line of the error, or 0 when it concerns the whole file. */
  int line() {
    return line;
  }
}
