package dev.portage.core.admin;

/**
 * Serves one exact path of the {@link AdminServer}. Handlers run on the admin server's event loop:
 * they must be fast and must not block (read snapshots the component already keeps). An exception
 * becomes a 500 response with its message.
 */
@FunctionalInterface
public interface AdminHandler {

  /** The response to {@code request}; never null. */
  AdminResponse handle(AdminRequest request) throws Exception;
}
