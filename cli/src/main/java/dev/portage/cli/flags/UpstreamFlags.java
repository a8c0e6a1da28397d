package dev.portage.cli.flags;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The flags of an upstream binary that a Portage command accepts without implementing them: each is
 * parsed in the upstream's forms (a bool flag alone or with a value, a value flag as {@code --f=v} or
 * {@code --f v}) and, when used, logs exactly one WARN line naming it. A manifest written for the
 * upstream binary thus starts ours unchanged, and the operator still learns what has no effect.
 *
 * <p>{@link #goFlag} declares a command whose upstream parses its flags with Go's {@code flag} package
 * ({@code -addr=:8086}): every long option of that command then also answers to its single-dash form.
 */
public final class UpstreamFlags {

  /** How an upstream flag takes its value. */
  enum Kind {
    /** {@code --f}, {@code --f=true}, {@code --f=0}; a following word is never consumed. */
    BOOL,
    /** {@code --f=v} or {@code --f v}. */
    VALUE
  }

  private final String upstream;
  private final boolean goSyntax;
  private final Map<String, Kind> flags = new LinkedHashMap<>();

  private UpstreamFlags(String upstream, boolean goSyntax) {
    this.upstream = upstream;
    this.goSyntax = goSyntax;
  }

  /** Flags of an upstream that parses with spf13/pflag (Konnectivity, YurtHub, kube-proxy). */
  public static UpstreamFlags pflag(String upstream) {
    return new UpstreamFlags(upstream, false);
  }

  /** Flags of an upstream that parses with Go's {@code flag} package (Linkerd's controllers). */
  public static UpstreamFlags goFlag(String upstream) {
    return new UpstreamFlags(upstream, true);
  }

  /** Adds boolean flags, named with their leading {@code --}. */
  public UpstreamFlags bool(String... names) {
    return add(Kind.BOOL, names);
  }

  /** Adds flags that take a value, named with their leading {@code --}. */
  public UpstreamFlags value(String... names) {
    return add(Kind.VALUE, names);
  }

  private UpstreamFlags add(Kind kind, String... names) {
    for (String name : names) {
      if (!name.startsWith("--") || name.length() < 4) {
        throw new IllegalArgumentException("upstream flag " + name + ": expected --name");
      }
      if (flags.put(name, kind) != null) {
        throw new IllegalArgumentException("upstream flag " + name + " is declared twice");
      }
    }
    return this;
  }

  /** The upstream's name, as the WARN line says it. */
  public String upstream() {
    return upstream;
  }

  /** Whether the command also takes Go's single-dash long flags. */
  public boolean goSyntax() {
    return goSyntax;
  }

  /** The declared flags by name, in declaration order. */
  Map<String, Kind> flags() {
    return Collections.unmodifiableMap(flags);
  }
}
