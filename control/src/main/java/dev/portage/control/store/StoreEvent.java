package dev.portage.control.store;

/**
 * One change in the store. For {@link Type#DELETED} the resource is the last state before the delete
 * and {@link #revision()} is the revision of the delete.
 */
public record StoreEvent(Type type, Resource resource, long revision) {

  /** What happened to the object. */
  public enum Type {
    ADDED,
    MODIFIED,
    DELETED
  }
}
