package dev.portage.proxy.mesh;

import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/** Unwraps the exceptions {@code CompletableFuture} wraps failures in. */
final class Failures {

  private Failures() {}

  static Throwable unwrap(Throwable t) {
    while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }
}
