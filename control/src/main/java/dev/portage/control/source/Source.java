package dev.portage.control.source;

/**
 * Something that feeds the control plane's {@link dev.portage.control.store.ResourceStore}: a
 * directory of YAML manifests or a Kubernetes API server. {@link #start()} loads the current state
 * and begins following changes; {@link #close()} stops following them (objects already in the store
 * stay). Implementations are thread-safe.
 */
public interface Source extends AutoCloseable {

  /** Loads the initial state into the store and begins following changes. Called once. */
  void start();

  /** True once the initial state is in the store (readiness). */
  boolean isSynced();

  /** A short human description for logs and the status page, e.g. {@code files:/etc/portage/rules}. */
  String describe();

  /** Stops following changes. Idempotent; never throws a checked exception. */
  @Override
  void close();
}
