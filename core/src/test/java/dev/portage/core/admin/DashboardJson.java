package dev.portage.core.admin;

import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * Test fixture (shared through the core test-jar): parses a {@code /dashboard/state} answer and
 * reads its sections, so every component's test asserts the JSON the page really receives.
 * Numbers become {@code Long} when integral, else {@code Double}. Stateless.
 */
public final class DashboardJson {

  private final Map<String, Object> state;

  private DashboardJson(Map<String, Object> state) {
    this.state = state;
  }

  /**
   * GETs {@code /dashboard/state} from the admin listener at {@code admin} and parses it.
   *
   * @throws IllegalStateException if the answer is not a 200
   */
  public static DashboardJson fetch(InetSocketAddress admin) throws IOException, InterruptedException {
    URI uri = URI.create("http://" + admin.getHostString() + ":" + admin.getPort() + "/dashboard/state");
    try (HttpClient http = HttpClient.newHttpClient()) {
      HttpResponse<String> r = http.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10)).build(),
          HttpResponse.BodyHandlers.ofString());
      if (r.statusCode() != 200) {
        throw new IllegalStateException(uri + ": HTTP " + r.statusCode() + ": " + r.body());
      }
      return parse(r.body());
    }
  }

  /**
   * Fetches the state until it satisfies {@code condition} (at most 10 s) and returns that state:
   * components update what the dashboard reads on their own threads.
   */
  public static DashboardJson awaitState(InetSocketAddress admin, Predicate<DashboardJson> condition) {
    DashboardJson[] last = new DashboardJson[1];
    await().atMost(Duration.ofSeconds(10)).until(() -> condition.test(last[0] = fetch(admin)));
    return last[0];
  }

  /** Parses one state document. @throws IllegalArgumentException on malformed JSON */
  @SuppressWarnings("unchecked")
  public static DashboardJson parse(String json) {
    Object value = parseValue(json);
    if (!(value instanceof Map)) {
      throw new IllegalArgumentException("state: not a JSON object: " + json);
    }
    return new DashboardJson((Map<String, Object>) value);
  }

  /** Any JSON text as maps, lists, strings, numbers, booleans and nulls. */
  public static Object parseValue(String json) {
    Parser p = new Parser(json);
    Object value = p.value();
    p.skipSpace();
    if (p.pos != json.length()) {
      throw new IllegalArgumentException("trailing text at " + p.pos + ": " + json);
    }
    return value;
  }

  public String component() {
    return (String) state.get("component");
  }

  public String time() {
    return (String) state.get("time");
  }

  /** Section titles in page order. */
  public List<String> titles() {
    return sections().stream().map(s -> (String) s.get("title")).toList();
  }

  /** The name/value pairs of fields section {@code title}. */
  @SuppressWarnings("unchecked")
  public Map<String, Object> fields(String title) {
    Object fields = section(title).get("fields");
    if (fields == null) {
      throw new AssertionError("section " + title + " is a table, not fields");
    }
    return (Map<String, Object>) fields;
  }

  /** The rows of table section {@code title}, each as column name to value. */
  @SuppressWarnings("unchecked")
  public List<Map<String, Object>> rows(String title) {
    Map<String, Object> section = section(title);
    List<String> columns = (List<String>) section.get("columns");
    if (columns == null) {
      throw new AssertionError("section " + title + " is fields, not a table");
    }
    List<Map<String, Object>> out = new ArrayList<>();
    for (List<Object> row : (List<List<Object>>) section.get("rows")) {
      Map<String, Object> named = new LinkedHashMap<>();
      for (int i = 0; i < columns.size(); i++) {
        named.put(columns.get(i), row.get(i));
      }
      out.add(named);
    }
    return out;
  }

  @SuppressWarnings("unchecked")
  private List<Map<String, Object>> sections() {
    return (List<Map<String, Object>>) state.get("sections");
  }

  private Map<String, Object> section(String title) {
    return sections().stream()
        .filter(s -> title.equals(s.get("title")))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no section " + title + " in " + titles()));
  }

  @Override
  public String toString() {
    return state.toString();
  }

  private static final class Parser {
    private final String s;
    private int pos;

    Parser(String s) {
      this.s = s;
    }

    void skipSpace() {
      while (pos < s.length() && Character.isWhitespace(s.charAt(pos))) {
        pos++;
      }
    }

    Object value() {
      skipSpace();
      if (pos >= s.length()) {
        throw error("value expected");
      }
      char c = s.charAt(pos);
      switch (c) {
        case '{' -> {
          return object();
        }
        case '[' -> {
          return array();
        }
        case '"' -> {
          return string();
        }
        default -> {
          if (s.startsWith("true", pos)) {
            pos += 4;
            return Boolean.TRUE;
          }
          if (s.startsWith("false", pos)) {
            pos += 5;
            return Boolean.FALSE;
          }
          if (s.startsWith("null", pos)) {
            pos += 4;
            return null;
          }
          return number();
        }
      }
    }

    private Map<String, Object> object() {
      Map<String, Object> out = new LinkedHashMap<>();
      pos++;
      skipSpace();
      if (peek() == '}') {
        pos++;
        return out;
      }
      while (true) {
        skipSpace();
        if (peek() != '"') {
          throw error("key expected");
        }
        String key = string();
        skipSpace();
        expect(':');
        out.put(key, value());
        skipSpace();
        if (peek() == ',') {
          pos++;
        } else {
          expect('}');
          return out;
        }
      }
    }

    private List<Object> array() {
      List<Object> out = new ArrayList<>();
      pos++;
      skipSpace();
      if (peek() == ']') {
        pos++;
        return out;
      }
      while (true) {
        out.add(value());
        skipSpace();
        if (peek() == ',') {
          pos++;
        } else {
          expect(']');
          return out;
        }
      }
    }

    private String string() {
      StringBuilder out = new StringBuilder();
      pos++;
      while (true) {
        if (pos >= s.length()) {
          throw error("unterminated string");
        }
        char c = s.charAt(pos++);
        if (c == '"') {
          return out.toString();
        }
        if (c != '\\') {
          out.append(c);
          continue;
        }
        char e = s.charAt(pos++);
        switch (e) {
          case 'n' -> out.append('\n');
          case 'r' -> out.append('\r');
          case 't' -> out.append('\t');
          case 'b' -> out.append('\b');
          case 'f' -> out.append('\f');
          case 'u' -> {
            out.append((char) Integer.parseInt(s.substring(pos, pos + 4), 16));
            pos += 4;
          }
          default -> out.append(e);
        }
      }
    }

    private Object number() {
      int start = pos;
      while (pos < s.length() && "+-0123456789.eE".indexOf(s.charAt(pos)) >= 0) {
        pos++;
      }
      String n = s.substring(start, pos);
      if (n.isEmpty()) {
        throw error("unexpected character '" + s.charAt(start) + "'");
      }
      return n.contains(".") || n.contains("e") || n.contains("E") ? (Object) Double.parseDouble(n) : (Object) Long.parseLong(n);
    }

    private char peek() {
      return pos < s.length() ? s.charAt(pos) : '\0';
    }

    private void expect(char c) {
      if (peek() != c) {
        throw error("'" + c + "' expected");
      }
      pos++;
    }

    private IllegalArgumentException error(String what) {
      return new IllegalArgumentException(what + " at " + pos + ": " + s);
    }
  }
}
