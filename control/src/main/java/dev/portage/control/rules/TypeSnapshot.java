package dev.portage.control.rules;

import com.google.protobuf.Any;
import com.google.protobuf.Message;
import java.util.List;

/**
 * The full state of one rule type at one kind revision, converted once for every client: immutable,
 * shared by all connections.
 *
 * @param changeNanos ticker time of the first change this state includes (for push latency)
 */
record TypeSnapshot(RuleKind kind, long revision, List<Entry> entries, long changeNanos) {

  TypeSnapshot {
    entries = List.copyOf(entries);
  }

  /**
   * One object.
   *
   * @param key {@code name/namespace}, as upstream keys it
   * @param data the packed {@code <Kind>ToClient}, or null for per-client kinds
   * @param spec the parsed CRD spec
   */
  record Entry(String key, String namespace, Any data, Message spec) {}
}
