package dev.portage.proxy.service.nftables;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What one owner (a Service port, or the table's fixed skeleton) puts into the table: the chains it
 * owns, the sets it needs declared, and the elements it adds to sets. Several owners may declare the
 * same set or add the same element; the table keeps each as long as one owner still wants it.
 * Immutable; an owner whose input did not change keeps the same fragment, so nothing is rewritten.
 *
 * @param chains the chains this owner alone defines
 * @param sets sets (or maps) this owner needs
 * @param elements elements by set name, then key, to value ({@code ""} for a set element)
 */
record Fragment(List<Chain> chains, List<SetDeclaration> sets, Map<String, Map<String, String>> elements) {

  static final Fragment EMPTY = new Fragment(List.of(), List.of(), Map.of());

  Fragment {
    chains = List.copyOf(chains);
    sets = List.copyOf(sets);
    Map<String, Map<String, String>> copy = new HashMap<>();
    elements.forEach((set, byKey) -> copy.put(set, Map.copyOf(byKey)));
    elements = Map.copyOf(copy);
  }

  /** Collects a fragment; not thread-safe. */
  static final class Builder {
    private final List<Chain> chains = new ArrayList<>();
    private final List<SetDeclaration> sets = new ArrayList<>();
    private final Map<String, Map<String, String>> elements = new LinkedHashMap<>();

    Builder chain(Chain chain) {
      chains.add(Objects.requireNonNull(chain, "chain"));
      return this;
    }

    Builder set(SetDeclaration set) {
      sets.add(Objects.requireNonNull(set, "set"));
      return this;
    }

    /** Adds {@code key : value} to map {@code set}, or {@code key} to a set when value is "". */
    Builder element(String set, String key, String value) {
      elements.computeIfAbsent(set, s -> new LinkedHashMap<>()).put(key, value);
      return this;
    }

    Fragment build() {
      return new Fragment(chains, sets, elements);
    }
  }
}
