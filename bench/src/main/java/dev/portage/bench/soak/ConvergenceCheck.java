package dev.portage.bench.soak;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * After the load and the faults: pins {@code soak-web} to one backend in the manifests and checks
 * that the sidecar (per-request balancing) and the service proxy (per-connection balancing, a new
 * connection per probe) send only there within a deadline — i.e. that proxies still follow the
 * control plane after it was killed and restarted under them. Main thread only.
 */
final class ConvergenceCheck {
  /** How one proxy did: whether and when every probe of a round reached the pinned backend. */
  record Result(String proxy, String pinned, boolean converged, long afterNanos, String lastSeen) {}

  private static final int ROUND = 8;
  private static final Duration POLL = Duration.ofMillis(500);

  private ConvergenceCheck() {}

  /**
   * Polls until a whole round of {@code ROUND} requests was answered by {@code pinned} or the
   * deadline passed. {@code freshConnections}: a new client (so a new TCP connection) per request.
   */
  static Result await(String proxy, String base, String authority, String pinned, boolean freshConnections,
      Duration deadline, SoakClock clock) throws InterruptedException {
    long start = clock.now();
    CountDownLatch never = new CountDownLatch(1);
    String last = "";
    HttpClient shared = client();
    try {
      while (clock.now() - start < deadline.toNanos()) {
        boolean all = true;
        for (int i = 0; i < ROUND && all; i++) {
          HttpClient c = freshConnections ? client() : shared;
          try {
            last = backend(c, base, authority);
            all = pinned.equals(last);
          } finally {
            if (freshConnections) {
              c.close();
            }
          }
        }
        if (all) {
          return new Result(proxy, pinned, true, clock.now() - start, last);
        }
        never.await(POLL.toMillis(), TimeUnit.MILLISECONDS);
      }
      return new Result(proxy, pinned, false, clock.now() - start, last);
    } finally {
      shared.close();
    }
  }

  private static HttpClient client() {
    return HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(3)).build();
  }

  /** The X-Backend of one small GET, or a description of what went wrong. */
  private static String backend(HttpClient c, String base, String authority) throws InterruptedException {
    HttpRequest req = HttpRequest.newBuilder(URI.create(base + "/api/1?n=16")).header("Host", authority)
        .timeout(Duration.ofSeconds(10)).GET().build();
    try {
      HttpResponse<Void> rsp = c.send(req, HttpResponse.BodyHandlers.discarding());
      return rsp.statusCode() == 200 ? rsp.headers().firstValue("X-Backend").orElse("(no X-Backend)")
          : "HTTP " + rsp.statusCode();
    } catch (IOException e) {
      return e.toString();
    }
  }
}
