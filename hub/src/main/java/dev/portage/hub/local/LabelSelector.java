package dev.portage.hub.local;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

/**
 * A Kubernetes label selector ({@code app=web,tier!=db,env in (a,b),!legacy,release}) applied to
 * cached objects' {@code metadata.labels}, JSON or protobuf. Immutable.
 */
final class LabelSelector implements Predicate<ObjectFields> {

  private final List<Predicate<Map<String, String>>> terms;

  private LabelSelector(List<Predicate<Map<String, String>>> terms) {
    this.terms = terms;
  }

  /**
   * Parses a selector; "" selects everything.
   *
   * @throws IllegalArgumentException saying which term is malformed
   */
  static LabelSelector parse(String selector) {
    List<Predicate<Map<String, String>>> terms = new ArrayList<>();
    for (String raw : splitTerms(selector)) {
      String term = raw.trim();
      if (term.isEmpty()) {
        continue;
      }
      terms.add(term(term));
    }
    return new LabelSelector(List.copyOf(terms));
  }

  /** Whether this selector selects every object (it is ""). */
  boolean selectsAll() {
    return terms.isEmpty();
  }

  @Override
  public boolean test(ObjectFields object) {
    if (terms.isEmpty()) {
      return true;
    }
    Map<String, String> labels = object.labels();
    for (Predicate<Map<String, String>> t : terms) {
      if (!t.test(labels)) {
        return false;
      }
    }
    return true;
  }

  private static Predicate<Map<String, String>> term(String term) {
    String lower = term;
    int in = indexOfWord(lower, " notin ");
    if (in > 0) {
      String key = key(term.substring(0, in), term);
      Set<String> values = values(term.substring(in + " notin ".length()), term);
      return labels -> !labels.containsKey(key) || !values.contains(labels.get(key));
    }
    in = indexOfWord(lower, " in ");
    if (in > 0) {
      String key = key(term.substring(0, in), term);
      Set<String> values = values(term.substring(in + " in ".length()), term);
      return labels -> labels.containsKey(key) && values.contains(labels.get(key));
    }
    int ne = term.indexOf("!=");
    if (ne > 0) {
      String key = key(term.substring(0, ne), term);
      String value = term.substring(ne + 2).trim();
      return labels -> !labels.containsKey(key) || !labels.get(key).equals(value);
    }
    int eq = term.indexOf('=');
    if (eq > 0) {
      String key = key(term.substring(0, eq), term);
      String value = term.substring(term.startsWith("==", eq) ? eq + 2 : eq + 1).trim();
      return labels -> labels.containsKey(key) && labels.get(key).equals(value);
    }
    if (term.startsWith("!")) {
      String key = key(term.substring(1), term);
      return labels -> !labels.containsKey(key);
    }
    String key = key(term, term);
    return labels -> labels.containsKey(key);
  }

  private static int indexOfWord(String term, String word) {
    return term.indexOf(word);
  }

  private static String key(String key, String term) {
    String k = key.trim();
    if (k.isEmpty() || k.chars().anyMatch(c -> c == ' ' || c == '(' || c == ')' || c == '!' || c == '=')) {
      throw new IllegalArgumentException("labelSelector: malformed term '" + term + "'");
    }
    return k;
  }

  private static Set<String> values(String list, String term) {
    String l = list.trim();
    if (!l.startsWith("(") || !l.endsWith(")")) {
      throw new IllegalArgumentException(
          "labelSelector: malformed term '" + term + "' (expected: values in parentheses)");
    }
    Set<String> out = new java.util.HashSet<>();
    for (String v : l.substring(1, l.length() - 1).split(",")) {
      out.add(v.trim());
    }
    return out;
  }

  /** Splits on commas outside parentheses. */
  private static List<String> splitTerms(String selector) {
    List<String> out = new ArrayList<>();
    int depth = 0;
    int start = 0;
    for (int i = 0; i < selector.length(); i++) {
      char c = selector.charAt(i);
      if (c == '(') {
        depth++;
      } else if (c == ')') {
        depth--;
      } else if (c == ',' && depth == 0) {
        out.add(selector.substring(start, i));
        start = i + 1;
      }
    }
    if (depth != 0) {
      throw new IllegalArgumentException("labelSelector: unbalanced parentheses in '" + selector + "'");
    }
    out.add(selector.substring(start));
    return out;
  }
}
