package dev.portage.cli;

import picocli.CommandLine.Option;

/**
 * Upstream's {@code --enable-profiling} and {@code --enable-contention-profiling} (Konnectivity's server
 * and agent), served with the JVM's tools on the admin port: a picocli mixin.
 */
final class ProfilingOptions {
  @Option(names = "--enable-profiling", defaultValue = "false",
      description = "Serve a JFR recording and thread dumps under /debug/pprof/ on the admin port (default: ${DEFAULT-VALUE}).")
  boolean enableProfiling;

  @Option(names = "--enable-contention-profiling", defaultValue = "false",
      description = "With --enable-profiling, record lock contention too (default: ${DEFAULT-VALUE}).")
  boolean enableContentionProfiling;
}
