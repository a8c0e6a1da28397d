package dev.portage.cli;

import io.prometheus.metrics.instrumentation.jvm.JvmMetrics;
import io.prometheus.metrics.model.registry.PrometheusRegistry;

/**
 * The registry a running {@code portage} process serves its metrics from: Prometheus' default
 * registry, with the process metrics ({@code process_cpu_seconds_total}, {@code process_open_fds},
 * {@code process_resident_memory_bytes}, …) that Go binaries export too, and the JVM's own ({@code
 * jvm_memory_*}, {@code jvm_gc_*}, {@code jvm_threads_*}) where Go binaries export {@code go_*}.
 * Thread-safe; registering twice is a no-op.
 */
final class ProcessMetrics {
  private ProcessMetrics() {}

  /** The default registry, with the process and JVM metrics registered. */
  static PrometheusRegistry registry() {
    JvmMetrics.builder().register(PrometheusRegistry.defaultRegistry);
    return PrometheusRegistry.defaultRegistry;
  }
}
