package dev.portage.control.store;

import java.util.List;

/**
 * Every object of one kind at one moment, sorted by key, with the kind's revision: the store revision
 * of the last change (add, modify or delete) to any object of that kind, 0 if it never had one.
 */
public record KindSnapshot(String kind, long revision, List<Resource> items) {
  public KindSnapshot {
    items = List.copyOf(items);
  }
}
