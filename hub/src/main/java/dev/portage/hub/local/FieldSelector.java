package dev.portage.hub.local;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/**
 * A Kubernetes field selector ({@code metadata.name=x,metadata.namespace!=y,spec.nodeName=n1})
 * applied to cached objects: each field is a dotted path into the object, compared as text
 * with {@code =}, {@code ==} or {@code !=}. A missing field compares as "". Immutable.
 */
final class FieldSelector implements Predicate<ObjectFields> {

  private record Term(String[] path, String value, boolean negated) {}

  private final List<Term> terms;

  private FieldSelector(List<Term> terms) {
    this.terms = terms;
  }

  /**
   * Parses a selector; "" selects everything.
   *
   * @throws IllegalArgumentException saying which term is malformed
   */
  static FieldSelector parse(String selector) {
    List<Term> terms = new ArrayList<>();
    for (String raw : selector.split(",")) {
      String term = raw.trim();
      if (term.isEmpty()) {
        continue;
      }
      int ne = term.indexOf("!=");
      int eq = term.indexOf('=');
      String field;
      String value;
      boolean negated = ne > 0;
      if (negated) {
        field = term.substring(0, ne);
        value = term.substring(ne + 2);
      } else if (eq > 0) {
        field = term.substring(0, eq);
        value = term.substring(term.startsWith("==", eq) ? eq + 2 : eq + 1);
      } else {
        throw new IllegalArgumentException(
            "fieldSelector: malformed term '" + term + "' (expected: field=value or field!=value)");
      }
      terms.add(new Term(field.trim().split("\\."), value.trim(), negated));
    }
    return new FieldSelector(List.copyOf(terms));
  }

  /** Whether this selector selects every object (it is ""). */
  boolean selectsAll() {
    return terms.isEmpty();
  }

  @Override
  public boolean test(ObjectFields object) {
    for (Term t : terms) {
      String actual = object.field(t.path);
      if (actual.equals(t.value) == t.negated) {
        return false;
      }
    }
    return true;
  }
}
