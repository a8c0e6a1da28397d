package dev.portage.bench.soak;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;

/**
 * One HTTP worker's request to the service proxy or the sidecar: {@code GET /api/<seed>?n=<len>}
 * (64 B to 64 KiB) with the service's authority in {@code Host} (the sidecar routes on it; the L4
 * proxy ignores it), body checked against the payload the backends serve. Keep-alive connections
 * from its own {@link HttpClient}; one instance per worker thread.
 */
final class HttpGetClient implements AutoCloseable {
  static final int MIN_SIZE = 64;
  static final int MAX_SIZE = 64 * 1024;

  private final HttpClient client;
  private final String base;
  private final List<String> authorities;
  private final PathStats stats;
  private final SoakClock clock;
  private final Duration timeout;
  private long turn;

  /**
   * @param authorities Host headers to use in turn (the harness sets
   *     {@code jdk.httpclient.allowRestrictedHeaders=host} so they can be set)
   */
  HttpGetClient(String base, List<String> authorities, PathStats stats, SoakClock clock, Duration timeout) {
    this.client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(Duration.ofSeconds(3)).build();
    this.base = base;
    this.authorities = List.copyOf(authorities);
    this.stats = stats;
    this.clock = clock;
    this.timeout = timeout;
  }

  /** Runs one request and records it; returns whether it succeeded. */
  boolean once(SplittableRandom random) {
    String authority = authorities.get((int) (turn++ % authorities.size()));
    double lo = Math.log(MIN_SIZE);
    double hi = Math.log(MAX_SIZE);
    int size = (int) Math.round(Math.exp(lo + random.nextDouble() * (hi - lo)));
    long seed = random.nextLong() & Long.MAX_VALUE;
    long start = clock.now();
    stats.attempt();
    String where = authority.substring(0, authority.indexOf('.')) + " " + size + " B";
    HttpRequest req = HttpRequest.newBuilder(URI.create(base + "/api/" + seed + "?n=" + size))
        .header("Host", authority).timeout(timeout).GET().build();
    try {
      HttpResponse<byte[]> rsp = client.send(req, HttpResponse.BodyHandlers.ofByteArray());
      byte[] body = rsp.body();
      if (rsp.statusCode() != 200) {
        String text = new String(body, 0, Math.min(body.length, 120), StandardCharsets.UTF_8)
            .replaceAll("\\s+", " ").strip();
        stats.failure(start, clock.now(), false, where + ": HTTP " + rsp.statusCode() + " " + text);
        return false;
      }
      byte[] expected = Payloads.bytes(seed, size);
      if (body.length != size || Payloads.crc(body) != Payloads.crc(expected)) {
        stats.mismatch(start, clock.now(), where + ": got " + body.length + " B, crc "
            + Long.toHexString(Payloads.crc(body)) + " != " + Long.toHexString(Payloads.crc(expected))
            + " from " + rsp.headers().firstValue("X-Backend").orElse("?"));
        return false;
      }
      stats.success(size);
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
