package dev.portage.proxy.service;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Parses the YAML endpoints file of {@code --endpoints-file}:
 *
 * <pre>
 * services:
 *   - name: web
 *     listen: 127.0.0.1:8080
 *     endpoints: ["127.0.0.1:9001", "127.0.0.1:9002"]   # or authority: web.default.svc.cluster.local:8080
 *     balancer: round-robin        # optional: round-robin | random | p2c-ewma
 *     sessionAffinity: ClientIP    # optional: None | ClientIP
 *     affinityTimeout: 10800s      # optional, with ClientIP
 * </pre>
 *
 * Every error names the file and the line. Stateless.
 */
final class EndpointsFile {

  private static final ObjectMapper YAML =
      new ObjectMapper(new YAMLFactory())
          .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
          .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);

  /** One list entry as written; validated into a {@link ServiceSpec}. */
  record Entry(
      @JsonProperty("name") String name,
      @JsonProperty("listen") String listen,
      @JsonProperty("endpoints") List<String> endpoints,
      @JsonProperty("authority") String authority,
      @JsonProperty("balancer") String balancer,
      @JsonProperty("sessionAffinity") String sessionAffinity,
      @JsonProperty("affinityTimeout") String affinityTimeout) {}

  private EndpointsFile() {}

  /** The services {@code text} (the content of {@code file}) describes, by name, in file order. */
  static Map<String, ServiceSpec> parse(Path file, String text) throws MalformedEndpointsFileException {
    if (text.isBlank()) {
      throw new MalformedEndpointsFileException(
          file, 1, "empty file (expected: services: [...]; write 'services: []' for none)", null);
    }
    Map<String, ServiceSpec> services = new LinkedHashMap<>();
    Map<InetSocketAddress, String> listeners = new HashMap<>();
    try (JsonParser p = YAML.createParser(text)) {
      expect(file, p, p.nextToken(), JsonToken.START_OBJECT, "a mapping with 'services'");
      boolean sawServices = false;
      for (JsonToken t = p.nextToken(); t != JsonToken.END_OBJECT; t = p.nextToken()) {
        String field = p.currentName();
        if (!"services".equals(field)) {
          throw error(file, p, "unknown field '" + field + "' (expected: services)");
        }
        sawServices = true;
        JsonToken value = p.nextToken();
        if (value == JsonToken.VALUE_NULL) {
          continue;
        }
        expect(file, p, value, JsonToken.START_ARRAY, "a list of services");
        int index = 0;
        for (JsonToken e = p.nextToken(); e != JsonToken.END_ARRAY; e = p.nextToken(), index++) {
          int line = p.currentTokenLocation().getLineNr();
          expect(file, p, e, JsonToken.START_OBJECT, "a service mapping");
          Entry entry = YAML.readValue(p, Entry.class);
          ServiceSpec spec;
          try {
            spec = toSpec(entry);
          } catch (IllegalArgumentException | NullPointerException ex) {
            throw new MalformedEndpointsFileException(
                file, line, "services[" + index + "]: " + ex.getMessage(), ex);
          }
          if (services.putIfAbsent(spec.name(), spec) != null) {
            throw new MalformedEndpointsFileException(
                file, line, "services[" + index + "]: duplicate name '" + spec.name() + "'", null);
          }
          if (spec.listen().getPort() != 0) {
            String other = listeners.putIfAbsent(spec.listen(), spec.name());
            if (other != null) {
              throw new MalformedEndpointsFileException(
                  file, line, "services[" + index + "]: listen " + HostPort.format(spec.listen())
                      + " already used by service '" + other + "'", null);
            }
          }
        }
      }
      if (!sawServices) {
        throw new MalformedEndpointsFileException(file, 1, "missing 'services'", null);
      }
    } catch (JsonProcessingException e) {
      int line = e.getLocation() != null ? e.getLocation().getLineNr() : 0;
      throw new MalformedEndpointsFileException(file, line, e.getOriginalMessage(), e);
    } catch (MalformedEndpointsFileException e) {
      throw e;
    } catch (IOException e) {
      throw new MalformedEndpointsFileException(file, 0, e.getMessage(), e);
    }
    return services;
  }

  private static ServiceSpec toSpec(Entry e) {
    if (e.name() == null || e.name().isEmpty()) {
      throw new IllegalArgumentException("name: missing (expected: a service name)");
    }
    String prefix = e.name() + ": ";
    try {
      InetSocketAddress listen = HostPort.parse(e.listen(), "listen");
      if ((e.endpoints() == null) == (e.authority() == null)) {
        throw new IllegalArgumentException(
            "endpoints and authority: " + (e.endpoints() == null ? "neither" : "both")
                + " given (expected: exactly one)");
      }
      List<InetSocketAddress> endpoints = new ArrayList<>();
      if (e.endpoints() != null) {
        for (String endpoint : e.endpoints()) {
          endpoints.add(HostPort.parse(endpoint, "endpoints"));
        }
      }
      if (e.authority() != null && !e.authority().matches("[^:\\s]+:\\d+")) {
        throw new IllegalArgumentException("authority: " + e.authority() + " (expected: host:port)");
      }
      BalancerKind balancer =
          e.balancer() == null ? BalancerKind.ROUND_ROBIN : BalancerKind.fromLabel(e.balancer());
      Duration affinity = affinity(e);
      return new ServiceSpec(e.name(), listen, endpoints, balancer, affinity, e.authority());
    } catch (IllegalArgumentException ex) {
      throw new IllegalArgumentException(prefix + ex.getMessage(), ex);
    }
  }

  private static Duration affinity(Entry e) {
    String mode = e.sessionAffinity() == null ? "None" : e.sessionAffinity();
    switch (mode) {
      case "None" -> {
        if (e.affinityTimeout() != null) {
          throw new IllegalArgumentException(
              "affinityTimeout: given without sessionAffinity: ClientIP");
        }
        return null;
      }
      case "ClientIP" -> {
        if (e.affinityTimeout() == null) {
          return ServiceSpec.DEFAULT_AFFINITY_TIMEOUT;
        }
        Duration timeout = GoDuration.parse(e.affinityTimeout(), "affinityTimeout");
        if (timeout.isZero()) {
          throw new IllegalArgumentException(
              "affinityTimeout: " + e.affinityTimeout() + " (expected: > 0)");
        }
        return timeout;
      }
      default ->
          throw new IllegalArgumentException(
              "sessionAffinity: " + mode + " (expected: None or ClientIP)");
    }
  }

  private static void expect(Path file, JsonParser p, JsonToken actual, JsonToken expected, String what)
      throws MalformedEndpointsFileException {
    if (actual != expected) {
      String found = actual == null ? "end of file" : "'" + safeText(p) + "'";
      throw error(file, p, "found " + found + " (expected: " + what + ")");
    }
  }

  private static String safeText(JsonParser p) {
    try {
      return p.getText();
    } catch (IOException e) {
      return "?";
    }
  }

  private static MalformedEndpointsFileException error(Path file, JsonParser p, String message) {
    return new MalformedEndpointsFileException(file, p.currentTokenLocation().getLineNr(), message, null);
  }
}
