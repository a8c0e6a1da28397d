package dev.portage.core.admin;

/**
 * Renders one component's live state for the admin server's {@code /dashboard}: sections of
 * name/value fields and tables, read from the structures the component already keeps (registries,
 * maps, metrics), never from copies that can drift. Called on the admin server's event loop for
 * every poll of {@code /dashboard/state}, so it must be fast and must not block; an exception is
 * answered with HTTP 500 and shown by the page as an error banner.
 */
@FunctionalInterface
public interface DashboardSource {

  /** Adds the component's current sections to {@code view}. */
  void render(DashboardView view);
}
