package dev.portage.proxy.mesh;

/**
 * A failure the sidecar answers with its own status and a plain-text body, at the inbound
 * boundary.
 */
class ProxyException extends RuntimeException {

  private final int status;
  private final String body;

  ProxyException(int status, String body) {
    super(status + " " + body, null, false, false);
    this.status = status;
    this.body = body;
  }

  ProxyException(int status, String body, Throwable cause) {
    super(status + " " + body + ": " + cause, cause, false, false);
    this.status = status;
    this.body = body;
  }

  int status() {
    return status;
  }

  String body() {
    return body;
  }

  /** The endpoint could not be reached or failed before its response head; may be retried. */
  static class UpstreamFailure extends ProxyException {
    UpstreamFailure(String what, Throwable cause) {
      super(502, "upstream failure: " + what, cause);
    }
  }

  /**
   * No connection to the endpoint could be opened: nothing of the request was sent, so it may go to
   * another endpoint whatever its method.
   */
  static final class ConnectFailure extends UpstreamFailure {
    ConnectFailure(String endpoint, Throwable cause) {
      super("connect " + endpoint, cause);
    }
  }
}
