package dev.portage.proxy.service.nftables;

import java.util.List;
import java.util.Objects;

/**
 * One chain of the proxy's nftables table: its name, the hook declaration of a base chain, and its
 * rules in nft syntax, in order. Immutable; chains are compared by value to find what changed.
 *
 * @param name the chain's name (at most 256 characters)
 * @param hook for a base chain the text inside its braces, e.g. {@code type nat hook output priority
 *     -100 ;}, else null
 * @param rules the rules, each one line of nft syntax without the {@code add rule} prefix
 */
record Chain(String name, String hook, List<String> rules) {

  /** nftables' limit on object names ({@code NFT_NAME_MAXLEN}). */
  static final int MAX_NAME_LENGTH = 256;

  Chain {
    Objects.requireNonNull(name, "name");
    if (name.isEmpty() || name.length() > MAX_NAME_LENGTH) {
      throw new IllegalArgumentException(
          "chain name: " + name.length() + " characters (expected: 1.." + MAX_NAME_LENGTH + ")");
    }
    rules = List.copyOf(rules);
  }

  /** A regular (non-base) chain. */
  static Chain of(String name, List<String> rules) {
    return new Chain(name, null, rules);
  }
}
