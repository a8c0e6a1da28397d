package dev.portage.hub.proxy;

import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Resolves each distinct request once, not once per request: a connection asking the same thing
 * again (a kubelet re-reading its pod) gets its previous {@link RequestInfo} back after comparing the
 * request line and User-Agent, and equal requests share one instance hub-wide, so maps keyed by it
 * (the cache backlog) find their entry by identity, with hashes already computed. The shared table
 * forgets everything when it holds {@value #MAX_SHARED} requests. Thread-safe; each connection uses
 * its own {@link Connection}.
 */
public final class RequestInfoCache {

  /** Distinct requests shared at most; beyond this the table is simply cleared. */
  static final int MAX_SHARED = 4096;

  private final Map<RequestInfo, RequestInfo> shared = new ConcurrentHashMap<>();

  /** The side of one client connection; confined to its event loop. */
  public Connection connection() {
    return new Connection();
  }

  /** The shared instance equal to {@code info} ({@code info} itself when it is the first). */
  RequestInfo share(RequestInfo info) {
    RequestInfo known = shared.get(info);
    if (known != null) {
      return known;
    }
    if (shared.size() >= MAX_SHARED) {
      shared.clear();
    }
    known = shared.putIfAbsent(info, info);
    return known != null ? known : info;
  }

  /** Distinct requests shared now. */
  int size() {
    return shared.size();
  }

  /**
   * One connection's last request and what it resolved to. The decoder hands a repeated request
   * line the very same strings, so the comparison is mostly by identity. Not thread-safe.
   */
  public final class Connection {
    private String method;
    private String uri;
    private String userAgent;
    private RequestInfo info;

    private Connection() {}

    /** As {@link RequestInfoResolver#resolve}, the shared instance. */
    public RequestInfo resolve(String method, String uri, String userAgent) {
      RequestInfo last = info;
      if (last != null && uri.equals(this.uri) && method.equals(this.method)
          && Objects.equals(userAgent, this.userAgent)) {
        return last;
      }
      RequestInfo resolved = share(RequestInfoResolver.resolve(method, uri, userAgent));
      this.method = method;
      this.uri = uri;
      this.userAgent = userAgent;
      this.info = resolved;
      return resolved;
    }
  }
}
