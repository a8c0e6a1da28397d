package dev.portage.control.destination;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The caller's identity from {@code GetDestination.context_token}, JSON {@code {"ns", "nodeName",
 * "pod"}}. Parsed leniently: a missing, empty or malformed token gives empty fields (logged at DEBUG),
 * never an error, because older proxies send other shapes.
 */
record ContextToken(String ns, String nodeName, String pod) {

  static final ContextToken EMPTY = new ContextToken("", "", "");

  private static final Logger log = LoggerFactory.getLogger(ContextToken.class);
  private static final ObjectMapper JSON = new ObjectMapper();

  static ContextToken parse(String token) {
    if (token == null || token.isBlank()) {
      return EMPTY;
    }
    try {
      JsonNode n = JSON.readTree(token);
      if (n == null || !n.isObject()) {
        log.debug("context token is not a JSON object, ignored: {}", token);
        return EMPTY;
      }
      return new ContextToken(text(n, "ns"), text(n, "nodeName"), text(n, "pod"));
    } catch (IOException e) {
      log.debug("context token is not JSON, ignored: {}", token, e);
      return EMPTY;
    }
  }

  private static String text(JsonNode n, String field) {
    JsonNode v = n.get(field);
    return v != null && v.isTextual() ? v.asText() : "";
  }
}
