package dev.portage.proxy.service.nftables;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;

/**
 * The proxy's nftables table twice over: what it should hold (assembled from one {@link Fragment}
 * per owner) and what the last successful transaction put into the kernel. The kernel is never
 * listed: the committed copy lives here. {@link #prepare()} writes the nft script that takes the
 * kernel from committed to desired, touching only what owners changed since the last commit
 * (kube-proxy's partial sync), or the whole table after {@link #requireFullSync()} (start-up, a
 * failed transaction, the periodic resync).
 *
 * <p>A partial script runs in this order, so every reference points at something that exists: new
 * sets, new chains, element deletions, chain rewrites ({@code flush chain} + rules), element
 * additions, deletion of sets nobody needs, deletion of chains emptied by an earlier transaction.
 * Chains that stop being used are only flushed at first and deleted by the next transaction, as
 * kube-proxy does (older kernels still see a chain referenced for a while after its last
 * reference went). A full script replaces the table atomically: {@code add table}, {@code delete
 * table}, then everything.
 *
 * <p>Not thread-safe: owned by the sync (one thread at a time).
 */
final class TableState {

  /** Elements per {@code add element} command: one long line per set is slow for nft to parse. */
  private static final int ELEMENTS_PER_COMMAND = 500;

  private final String family;
  private final String table;
  private final String comment;

  // Desired state, kept incrementally from the owners' fragments.
  private final Map<String, Fragment> fragments = new HashMap<>();
  private final Map<String, Chain> chains = new HashMap<>();
  private final Map<String, Counted<SetDeclaration>> sets = new HashMap<>();
  private final Map<String, Map<String, Counted<String>>> elements = new HashMap<>();

  // What the kernel holds after the last successful transaction.
  private final Map<String, Chain> committedChains = new HashMap<>();
  private final Map<String, SetDeclaration> committedSets = new HashMap<>();
  private final Map<String, Map<String, String>> committedElements = new HashMap<>();
  /** Chains flushed (not deleted) by a committed transaction; the next one deletes them. */
  private final Set<String> emptiedChains = new HashSet<>();

  // Touched since the last commit.
  private final Set<String> dirtyChains = new LinkedHashSet<>();
  private final Set<String> dirtySets = new LinkedHashSet<>();
  private final Map<String, Set<String>> dirtyElements = new LinkedHashMap<>();
  private boolean fullSyncRequired = true;

  /**
   * @param family nftables family ({@code ip})
   * @param table the table's name; the proxy owns it entirely
   * @param comment the table's comment
   */
  TableState(String family, String table, String comment) {
    this.family = Objects.requireNonNull(family, "family");
    this.table = Objects.requireNonNull(table, "table");
    this.comment = Objects.requireNonNull(comment, "comment");
  }

  /** The fragment {@code owner} has now, or null. */
  Fragment fragment(String owner) {
    return fragments.get(owner);
  }

  /**
   * Replaces {@code owner}'s fragment. The same fragment object again is free: nothing is marked
   * changed.
   *
   * @throws IllegalArgumentException if a chain of {@code fragment} belongs to another owner
   */
  void put(String owner, Fragment fragment) {
    Objects.requireNonNull(owner, "owner");
    Objects.requireNonNull(fragment, "fragment");
    Fragment old = fragments.get(owner);
    if (old == fragment) {
      return;
    }
    for (Chain chain : fragment.chains()) {
      Chain existing = chains.get(chain.name());
      if (existing != null && (old == null || !old.chains().contains(existing))) {
        throw new IllegalArgumentException("chain " + chain.name() + " of " + owner + " already belongs to another owner");
      }
    }
    if (old != null) {
      withdraw(old);
    }
    fragments.put(owner, fragment);
    contribute(fragment);
  }

  /** Removes everything {@code owner} put into the table. */
  void remove(String owner) {
    Fragment old = fragments.remove(owner);
    if (old != null) {
      withdraw(old);
    }
  }

  /** Makes the next {@link #prepare()} rewrite the whole table (start-up, failure, periodic resync). */
  void requireFullSync() {
    fullSyncRequired = true;
  }

  /** Names of the desired chains (a read-only view). */
  Set<String> chainNames() {
    return java.util.Collections.unmodifiableSet(chains.keySet());
  }

  /**
   * The transaction that brings the kernel to the desired state, or an empty one when nothing
   * changed. Call {@link #committed(Transaction)} once the kernel took it, or {@link
   * #requireFullSync()} when it refused.
   */
  Transaction prepare() {
    if (fullSyncRequired || needsFullSync()) {
      return new Transaction(fullScript(), true, 0);
    }
    StringBuilder script = new StringBuilder();
    int commands = 0;
    for (String name : dirtySets) {
      Counted<SetDeclaration> want = sets.get(name);
      if (want != null && !committedSets.containsKey(name)) {
        addSet(script, want.value);
        commands++;
      }
    }
    List<Chain> rewrite = new ArrayList<>();
    List<String> flush = new ArrayList<>();
    for (String name : dirtyChains) {
      Chain want = chains.get(name);
      Chain have = committedChains.get(name);
      if (want != null && !want.equals(have)) {
        if (have == null && !emptiedChains.contains(name)) {
          addChain(script, want);
          commands++;
        }
        rewrite.add(want);
      } else if (want == null && have != null) {
        flush.add(name);
      }
    }
    Map<String, List<String>> deletions = new TreeMap<>();
    Map<String, List<String>> additions = new TreeMap<>();
    dirtyElements.forEach((set, keys) -> {
      Map<String, Counted<String>> want = elements.getOrDefault(set, Map.of());
      Map<String, String> have = committedElements.getOrDefault(set, Map.of());
      boolean setGoes = !sets.containsKey(set);
      if (setGoes && !committedSets.containsKey(set)) {
        return; // never declared: nothing in the kernel, nothing to write
      }
      SetDeclaration declaration = setGoes ? committedSets.get(set) : sets.get(set).value;
      for (String key : keys) {
        Counted<String> w = want.get(key);
        String h = have.get(key);
        if (h != null && !setGoes && (w == null || !w.value.equals(h))) {
          deletions.computeIfAbsent(set, s -> new ArrayList<>()).add(key);
        }
        if (w != null && !w.value.equals(h)) {
          additions.computeIfAbsent(set, s -> new ArrayList<>()).add(element(declaration, key, w.value));
        }
      }
    });
    commands += writeElements(script, "delete", deletions);
    for (Chain chain : rewrite) {
      if (committedChains.containsKey(chain.name())) {
        script.append("flush chain ").append(family).append(' ').append(table).append(' ')
            .append(chain.name()).append('\n');
        commands++;
      }
      commands += addRules(script, chain);
    }
    for (String name : flush) {
      script.append("flush chain ").append(family).append(' ').append(table).append(' ').append(name).append('\n');
      commands++;
    }
    commands += writeElements(script, "add", additions);
    for (String name : dirtySets) {
      if (!sets.containsKey(name) && committedSets.containsKey(name)) {
        SetDeclaration gone = committedSets.get(name);
        script.append("delete ").append(gone.kind()).append(' ').append(family).append(' ').append(table)
            .append(' ').append(name).append('\n');
        commands++;
      }
    }
    for (String name : new java.util.TreeSet<>(emptiedChains)) {
      if (!chains.containsKey(name)) {
        script.append("delete chain ").append(family).append(' ').append(table).append(' ').append(name).append('\n');
        commands++;
      }
    }
    return new Transaction(script.toString(), false, commands);
  }

  /** Records that the kernel applied {@code transaction}; the desired state is now committed. */
  void committed(Transaction transaction) {
    if (transaction.full()) {
      committedChains.clear();
      committedChains.putAll(chains);
      committedSets.clear();
      sets.forEach((name, counted) -> committedSets.put(name, counted.value));
      committedElements.clear();
      elements.forEach((set, byKey) -> {
        Map<String, String> copy = new HashMap<>(byKey.size() * 2);
        byKey.forEach((key, counted) -> copy.put(key, counted.value));
        committedElements.put(set, copy);
      });
      emptiedChains.clear();
      fullSyncRequired = false;
    } else {
      emptiedChains.removeIf(name -> !chains.containsKey(name)); // deleted by this transaction
      for (String name : dirtyChains) {
        Chain want = chains.get(name);
        if (want != null) {
          committedChains.put(name, want);
          emptiedChains.remove(name);
        } else if (committedChains.remove(name) != null) {
          emptiedChains.add(name);
        }
      }
      for (String name : dirtySets) {
        Counted<SetDeclaration> want = sets.get(name);
        if (want != null) {
          committedSets.put(name, want.value);
        } else {
          committedSets.remove(name);
          committedElements.remove(name);
        }
      }
      dirtyElements.forEach((set, keys) -> {
        Map<String, Counted<String>> want = elements.get(set);
        if (!sets.containsKey(set)) {
          return;
        }
        Map<String, String> have = committedElements.computeIfAbsent(set, s -> new HashMap<>());
        for (String key : keys) {
          Counted<String> w = want == null ? null : want.get(key);
          if (w == null) {
            have.remove(key);
          } else {
            have.put(key, w.value);
          }
        }
      });
    }
    dirtyChains.clear();
    dirtySets.clear();
    dirtyElements.clear();
  }

  /** Whether a change cannot be made in place (a base chain's hook or a set's type changed). */
  private boolean needsFullSync() {
    for (String name : dirtyChains) {
      Chain want = chains.get(name);
      Chain have = committedChains.get(name);
      if (want != null && have != null && !Objects.equals(want.hook(), have.hook())) {
        return true;
      }
      if (want != null && want.hook() != null && have == null) {
        return true;
      }
    }
    for (String name : dirtySets) {
      Counted<SetDeclaration> want = sets.get(name);
      SetDeclaration have = committedSets.get(name);
      if (want != null && have != null && !want.value.equals(have)) {
        return true;
      }
    }
    return false;
  }

  private String fullScript() {
    StringBuilder script = new StringBuilder();
    String header = "table " + family + ' ' + table;
    script.append("add ").append(header).append(" { comment \"").append(comment).append("\" ; }\n");
    script.append("delete ").append(header).append('\n');
    script.append("add ").append(header).append(" { comment \"").append(comment).append("\" ; }\n");
    for (Counted<SetDeclaration> set : new TreeMap<>(sets).values()) {
      addSet(script, set.value);
    }
    List<Chain> all = new ArrayList<>(new TreeMap<>(chains).values());
    for (Chain chain : all) {
      addChain(script, chain);
    }
    for (Chain chain : all) {
      addRules(script, chain);
    }
    Map<String, List<String>> additions = new TreeMap<>();
    elements.forEach((set, byKey) -> {
      Counted<SetDeclaration> declared = sets.get(set);
      if (declared == null) {
        throw new IllegalStateException("elements for set " + set + ", which no owner declares");
      }
      SetDeclaration declaration = declared.value;
      List<String> list = new ArrayList<>(byKey.size());
      byKey.forEach((key, counted) -> list.add(element(declaration, key, counted.value)));
      additions.put(set, list);
    });
    writeElements(script, "add", additions);
    return script.toString();
  }

  private void addSet(StringBuilder script, SetDeclaration set) {
    script.append("add ").append(set.kind()).append(' ').append(family).append(' ').append(table).append(' ')
        .append(set.name()).append(" { ").append(set.spec()).append(" }\n");
  }

  private void addChain(StringBuilder script, Chain chain) {
    script.append("add chain ").append(family).append(' ').append(table).append(' ').append(chain.name());
    if (chain.hook() != null) {
      script.append(" { ").append(chain.hook()).append(" }");
    }
    script.append('\n');
  }

  private int addRules(StringBuilder script, Chain chain) {
    for (String rule : chain.rules()) {
      script.append("add rule ").append(family).append(' ').append(table).append(' ').append(chain.name())
          .append(' ').append(rule).append('\n');
    }
    return chain.rules().size();
  }

  private int writeElements(StringBuilder script, String verb, Map<String, List<String>> bySet) {
    int commands = 0;
    for (Map.Entry<String, List<String>> entry : bySet.entrySet()) {
      List<String> list = entry.getValue();
      for (int from = 0; from < list.size(); from += ELEMENTS_PER_COMMAND) {
        script.append(verb).append(" element ").append(family).append(' ').append(table).append(' ')
            .append(entry.getKey()).append(" { ");
        int to = Math.min(list.size(), from + ELEMENTS_PER_COMMAND);
        for (int i = from; i < to; i++) {
          if (i > from) {
            script.append(", ");
          }
          script.append(list.get(i));
        }
        script.append(" }\n");
        commands++;
      }
    }
    return commands;
  }

  private static String element(SetDeclaration set, String key, String value) {
    return set != null && set.map() ? key + " : " + value : key;
  }

  private void contribute(Fragment fragment) {
    for (Chain chain : fragment.chains()) {
      chains.put(chain.name(), chain);
      dirtyChains.add(chain.name());
    }
    for (SetDeclaration set : fragment.sets()) {
      Counted<SetDeclaration> counted = sets.get(set.name());
      if (counted == null) {
        sets.put(set.name(), new Counted<>(set));
      } else {
        counted.value = set;
        counted.refs++;
      }
      dirtySets.add(set.name());
    }
    fragment.elements().forEach((set, byKey) -> {
      Map<String, Counted<String>> current = elements.computeIfAbsent(set, s -> new HashMap<>());
      Set<String> dirty = dirtyElements.computeIfAbsent(set, s -> new HashSet<>());
      byKey.forEach((key, value) -> {
        Counted<String> counted = current.get(key);
        if (counted == null) {
          current.put(key, new Counted<>(value));
        } else {
          counted.value = value;
          counted.refs++;
        }
        dirty.add(key);
      });
    });
  }

  private void withdraw(Fragment fragment) {
    for (Chain chain : fragment.chains()) {
      chains.remove(chain.name());
      dirtyChains.add(chain.name());
    }
    for (SetDeclaration set : fragment.sets()) {
      Counted<SetDeclaration> counted = sets.get(set.name());
      if (counted != null && --counted.refs == 0) {
        sets.remove(set.name());
      }
      dirtySets.add(set.name());
    }
    fragment.elements().forEach((set, byKey) -> {
      Map<String, Counted<String>> current = elements.get(set);
      if (current == null) {
        return;
      }
      Set<String> dirty = dirtyElements.computeIfAbsent(set, s -> new HashSet<>());
      byKey.forEach((key, value) -> {
        Counted<String> counted = current.get(key);
        if (counted != null && --counted.refs == 0) {
          current.remove(key);
        }
        dirty.add(key);
      });
      if (current.isEmpty()) {
        elements.remove(set);
      }
    });
  }

  /** A value several owners may want; it stays while {@code refs > 0}. */
  private static final class Counted<T> {
    T value;
    int refs = 1;

    Counted(T value) {
      this.value = value;
    }
  }

  /**
   * One nft transaction: the script for {@code nft -f -}, whether it rewrites the whole table, and
   * how many commands a partial one holds (0: nothing to do).
   */
  record Transaction(String script, boolean full, int commands) {
    boolean isEmpty() {
      return !full && commands == 0;
    }
  }
}
