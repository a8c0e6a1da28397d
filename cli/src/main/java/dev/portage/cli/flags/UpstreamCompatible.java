package dev.portage.cli.flags;

/**
 * A subcommand that stands in for an upstream binary: it names the upstream flags it accepts without
 * implementing them, so a manifest written for the upstream binary starts it unchanged.
 */
public interface UpstreamCompatible {

  /** The upstream flags this command accepts and ignores, each with one WARN line when used. */
  UpstreamFlags upstreamFlags();
}
