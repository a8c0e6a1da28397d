package dev.portage.hub;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.portage.core.time.TimeSource;
import dev.portage.hub.cache.CachePolicy;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads YurtHub's {@code yurt-hub-cfg} ConfigMap in {@code --namespace}: its {@code cache_agents}
 * (comma separated, {@code *} for all) adds components whose answers are cached, as it does in
 * YurtHub. The hub reads it through its own proxy port as component {@code yurthub}, so the read is
 * proxied (with the hub's credentials) while the cloud is up and cached like any answer, and
 * answered from that cache while it is down, after a restart too. Read at start, every {@link
 * #INTERVAL}, and when an API server turns healthy; a ConfigMap that is gone (404) removes the
 * added components, any other failure keeps them.
 *
 * <p>Thread-safe. The timer runs on the injected scheduler; requests complete on {@code executor}.
 */
final class HubConfigMap implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(HubConfigMap.class);

  static final String NAME = "yurt-hub-cfg";
  static final String KEY = "cache_agents";
  /** The component the hub's own reads are made (and cached) as. */
  static final String COMPONENT = "yurthub";
  static final Duration INTERVAL = Duration.ofMinutes(1);
  private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(30);

  private final URI uri;
  private final CachePolicy policy;
  private final TimeSource time;
  private final HttpClient http;
  private final ObjectMapper json;
  private final AtomicBoolean reading = new AtomicBoolean();
  private volatile ScheduledFuture<?> timer;
  private volatile boolean closed;

  /**
   * @param proxy the hub's plain proxy address (a wildcard address is reached on loopback)
   */
  HubConfigMap(String namespace, InetSocketAddress proxy, CachePolicy policy, ObjectMapper json,
      TimeSource time, Executor executor) {
    Objects.requireNonNull(namespace, "namespace");
    String host = proxy.getAddress().isAnyLocalAddress() ? "127.0.0.1"
        : proxy.getAddress().getHostAddress();
    if (host.contains(":")) {
      host = "[" + host + "]";
    }
    this.uri = URI.create("http://" + host + ":" + proxy.getPort() + "/api/v1/namespaces/"
        + namespace + "/configmaps/" + NAME);
    this.policy = Objects.requireNonNull(policy, "policy");
    this.json = Objects.requireNonNull(json, "json");
    this.time = Objects.requireNonNull(time, "time");
    this.http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
        .executor(Objects.requireNonNull(executor, "executor")).build();
  }

  /** Reads now and every {@link #INTERVAL}. */
  void start() {
    long every = INTERVAL.toNanos();
    timer = time.scheduler().scheduleAtFixedRate(this::read, 0, every, TimeUnit.NANOSECONDS);
  }

  /** Reads the ConfigMap unless a read is already on its way. */
  void read() {
    if (closed || !reading.compareAndSet(false, true)) {
      return;
    }
    HttpRequest request = HttpRequest.newBuilder(uri)
        .header("User-Agent", COMPONENT + "/portage")
        .header("Accept", "application/json")
        .timeout(REQUEST_TIMEOUT)
        .build();
    http.sendAsync(request, HttpResponse.BodyHandlers.ofByteArray())
        .whenComplete((response, error) -> {
          try {
            if (error != null) {
              log.debug("cannot read {}: {}", uri.getPath(), error.toString());
            } else {
              apply(response.statusCode(), response.body());
            }
          } finally {
            reading.set(false);
          }
        });
  }

  private void apply(int status, byte[] body) {
    Set<String> agents;
    if (status == 404) {
      agents = Set.of();
    } else if (status == 200) {
      try {
        JsonNode cm = json.readTree(body);
        agents = parse(cm == null ? "" : cm.path("data").path(KEY).asText(""));
      } catch (IOException e) {
        log.warn("{} is not a JSON ConfigMap: {}", uri.getPath(), e.getMessage());
        return;
      }
    } else {
      log.debug("cannot read {}: HTTP {}", uri.getPath(), status);
      return;
    }
    if (policy.setAddedComponents(agents)) {
      log.info("components cached besides the configured ones, from {}: {}", uri.getPath(),
          agents.isEmpty() ? "none" : new TreeSet<>(agents));
    }
  }

  /** The components a {@code cache_agents} value names. */
  static Set<String> parse(String value) {
    Set<String> out = new LinkedHashSet<>();
    for (String a : value.split(",")) {
      if (!a.isBlank()) {
        out.add(a.trim());
      }
    }
    return out;
  }

  @Override
  public void close() {
    closed = true;
    ScheduledFuture<?> t = timer;
    if (t != null) {
      t.cancel(false);
    }
    http.shutdownNow();
  }
}
