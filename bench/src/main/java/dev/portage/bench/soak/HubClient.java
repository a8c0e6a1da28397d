package dev.portage.bench.soak;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.SplittableRandom;

/**
 * One hub worker's request, as a kubelet would send it: a pod list (half the time) or one pod's GET,
 * with a kubelet User-Agent so the hub caches the answers and can serve them while its upstream is
 * down. An answer counts as good when it is 200 and names the pod(s) asked for. One instance per
 * worker thread.
 */
final class HubClient implements AutoCloseable {
  private static final String USER_AGENT = "kubelet/v1.32.0 (linux/amd64) kubernetes/soak";

  private final HttpClient client;
  private final String base;
  private final PathStats stats;
  private final SoakClock clock;
  private final Duration timeout;

  HubClient(String base, PathStats stats, SoakClock clock, Duration timeout) {
    this.client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(Duration.ofSeconds(3)).build();
    this.base = base;
    this.stats = stats;
    this.clock = clock;
    this.timeout = timeout;
  }

  /** Runs one request and records it; returns whether it succeeded. */
  boolean once(SplittableRandom random) {
    boolean list = random.nextBoolean();
    int pod = random.nextInt(FakeApiServer.PODS);
    String path = "/api/v1/namespaces/" + FakeApiServer.NAMESPACE + "/pods"
        + (list ? "" : "/" + FakeApiServer.podName(pod));
    String where = list ? "list" : "get " + FakeApiServer.podName(pod);
    long start = clock.now();
    stats.attempt();
    HttpRequest req = HttpRequest.newBuilder(URI.create(base + path)).timeout(timeout)
        .header("User-Agent", USER_AGENT).header("Accept", "application/json").GET().build();
    try {
      HttpResponse<String> rsp = client.send(req, HttpResponse.BodyHandlers.ofString());
      String body = rsp.body();
      if (rsp.statusCode() != 200) {
        stats.failure(start, clock.now(), false, where + ": HTTP " + rsp.statusCode() + " "
            + body.substring(0, Math.min(body.length(), 120)).replaceAll("\\s+", " "));
        return false;
      }
      if (list) {
        for (int i = 0; i < FakeApiServer.PODS; i++) {
          if (!body.contains("\"" + FakeApiServer.podName(i) + "\"")) {
            stats.failure(start, clock.now(), false, where + ": 200 without " + FakeApiServer.podName(i)
                + " (" + body.length() + " chars)");
            return false;
          }
        }
      } else if (!body.contains("\"name\":\"" + FakeApiServer.podName(pod) + "\"")) {
        stats.failure(start, clock.now(), false, where + ": 200 without its name: "
            + body.substring(0, Math.min(body.length(), 120)));
        return false;
      }
      stats.success(0);
      return true;
    } catch (HttpTimeoutException e) {
      stats.failure(start, clock.now(), true, where + ": no answer within " + timeout.toSeconds() + " s");
    } catch (IOException e) {
      stats.failure(start, clock.now(), false, where + ": " + e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      stats.failure(start, clock.now(), false, where + ": interrupted");
    }
    return false;
  }

  @Override
  public void close() {
    client.close();
  }
}
