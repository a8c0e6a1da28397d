package dev.portage.control.store;

/** A live watch on the store; closing it stops deliveries (an in-flight delivery may finish). */
public interface Watch extends AutoCloseable {
  @Override
  void close();
}
