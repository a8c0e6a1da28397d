package dev.portage.control.source.files;

/** A manifest file that cannot be loaded; the message starts with {@code file:line[:column]: }. */
final class ManifestException extends Exception {

  ManifestException(String message) {
    super(message);
  }

  ManifestException(String message, Throwable cause) {
    super(message, cause);
  }
}
