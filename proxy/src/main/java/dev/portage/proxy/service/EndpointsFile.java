package dev.portage.proxy.service;

import dev.portage.core.time.GoDurations;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.function.Supplier;
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

  private static final YAMLFactory YAML = new YAMLFactory();

  private static final List<String> FIELDS =
      List.of("name", "listen", "endpoints", "authority", "balancer", "sessionAffinity", "affinityTimeout");

  /** One list entry as written: field values (String or List of String) and the line of each field. */
  private record Entry(Map<String, Object> values, Map<String, Integer> lines) {

    String text(String field) {
      return (String) values.get(field);
    }

    @SuppressWarnings("unchecked")
    List<String> list(String field) {
      return (List<String>) values.get(field);
    }
  }

  /** A bad value of one field; carries the field so the error names its line. */
  private static final class FieldException extends IllegalArgumentException {
    final String field;

    FieldException(String field, String message) {
      super(message);
      this.field = field;
    }
  }

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
          Entry entry = readEntry(file, p, index);
          ServiceSpec spec;
          try {
            spec = toSpec(entry);
          } catch (FieldException ex) {
            throw new MalformedEndpointsFileException(
                file, entry.lines().getOrDefault(ex.field, line), "services[" + index + "]: " + ex.getMessage(), ex);
          } catch (IllegalArgumentException ex) {
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

  /** Reads one service mapping, remembering the line of each field. */
  private static Entry readEntry(Path file, JsonParser p, int index) throws IOException {
    Map<String, Object> values = new HashMap<>();
    Map<String, Integer> lines = new HashMap<>();
    for (JsonToken t = p.nextToken(); t != JsonToken.END_OBJECT; t = p.nextToken()) {
      String field = p.currentName();
      int line = p.currentTokenLocation().getLineNr();
      if (!FIELDS.contains(field)) {
        throw new MalformedEndpointsFileException(file, line, "services[" + index + "]: unknown field '"
            + field + "' (expected: one of " + String.join(", ", FIELDS) + ")", null);
      }
      JsonToken value = p.nextToken();
      Object parsed;
      if (field.equals("endpoints") && value == JsonToken.START_ARRAY) {
        List<String> list = new ArrayList<>();
        for (JsonToken item = p.nextToken(); item != JsonToken.END_ARRAY; item = p.nextToken()) {
          if (!item.isScalarValue()) {
            throw error(file, p, "services[" + index + "]: endpoints: a nested value (expected: host:port strings)");
          }
          list.add(p.getText());
        }
        parsed = list;
      } else if (value.isScalarValue() && value != JsonToken.VALUE_NULL) {
        parsed = p.getText();
      } else {
        throw new MalformedEndpointsFileException(file, line, "services[" + index + "]: " + field + ": "
            + (value == JsonToken.VALUE_NULL ? "empty" : "not a scalar")
            + (field.equals("endpoints") ? " (expected: a list of host:port)" : " (expected: a string)"), null);
      }
      values.put(field, parsed);
      lines.put(field, line);
    }
    return new Entry(values, lines);
  }

  private static ServiceSpec toSpec(Entry e) {
    String name = e.text("name");
    if (name == null || name.isEmpty()) {
      throw new IllegalArgumentException("name: missing (expected: a service name)");
    }
    String prefix = name + ": ";
    InetSocketAddress listen = field(prefix, "listen", () -> HostPort.parse(e.text("listen"), "listen"));
    if ((e.list("endpoints") == null) == (e.text("authority") == null)) {
      throw new IllegalArgumentException(prefix + "endpoints and authority: "
          + (e.list("endpoints") == null ? "neither" : "both") + " given (expected: exactly one)");
    }
    List<InetSocketAddress> endpoints = field(prefix, "endpoints", () -> {
      List<InetSocketAddress> list = new ArrayList<>();
      for (String endpoint : e.list("endpoints") == null ? List.<String>of() : e.list("endpoints")) {
        list.add(HostPort.parse(endpoint, "endpoints"));
      }
      if (new HashSet<>(list).size() != list.size()) {
        throw new IllegalArgumentException("endpoints: " + e.list("endpoints") + " (expected: no duplicates)");
      }
      return list;
    });
    String authority = e.text("authority");
    field(prefix, "authority", () -> {
      if (authority != null && !authority.matches("[^:\\s]+:\\d+")) {
        throw new IllegalArgumentException("authority: " + authority + " (expected: host:port)");
      }
      return authority;
    });
    BalancerKind balancer = field(prefix, "balancer", () ->
        e.text("balancer") == null ? BalancerKind.ROUND_ROBIN : BalancerKind.fromLabel(e.text("balancer")));
    Duration affinity = affinity(prefix, e);
    return new ServiceSpec(name, listen, endpoints, balancer, affinity, authority);
  }

  private static <T> T field(String prefix, String field, Supplier<T> parse) {
    try {
      return parse.get();
    } catch (IllegalArgumentException ex) {
      throw new FieldException(field, prefix + ex.getMessage());
    }
  }

  private static Duration affinity(String prefix, Entry e) {
    String mode = e.text("sessionAffinity") == null ? "None" : e.text("sessionAffinity");
    String timeout = e.text("affinityTimeout");
    switch (mode) {
      case "None" -> {
        if (timeout != null) {
          throw new FieldException("affinityTimeout",
              prefix + "affinityTimeout: given without sessionAffinity: ClientIP");
        }
        return null;
      }
      case "ClientIP" -> {
        if (timeout == null) {
          return ServiceSpec.DEFAULT_AFFINITY_TIMEOUT;
        }
        Duration parsed = field(prefix, "affinityTimeout", () -> affinityTimeout(timeout));
        if (parsed.isZero()) {
          throw new FieldException("affinityTimeout", prefix + "affinityTimeout: " + timeout + " (expected: > 0)");
        }
        return parsed;
      }
      default ->
          throw new FieldException("sessionAffinity",
              prefix + "sessionAffinity: " + mode + " (expected: None or ClientIP)");
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

  private static Duration affinityTimeout(String text) {
    try {
      return GoDurations.parse(text);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "affinityTimeout: " + text + " (expected: a duration such as 10800s, 3h, 1m30s)", e);
    }
  }
}
