package dev.portage.proxy.mesh;

/**
 * How one call down the request stack ({@link Service#call}) ended: exactly one call with either
 * the response head (and its body, to be piped or discarded exactly once) or the failure. May be
 * called on any thread, and before {@link Service#call} returns. The request is passed along so one
 * object (a connection's handler, a layer's per-request state) can hear many requests.
 */
@FunctionalInterface
interface Reply {

  /**
   * @param response the response, or null when {@code failure} is set
   * @param failure why no response came ({@link ProxyException} for an HTTP answer), or null
   */
  void done(ProxyRequest request, ProxyResponse response, Throwable failure);
}
