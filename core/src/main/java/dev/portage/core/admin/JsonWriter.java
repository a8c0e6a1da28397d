package dev.portage.core.admin;

import java.lang.reflect.Array;
import java.util.Map;

/**
 * Writes plain Java values as JSON text: null, booleans, numbers (non-finite ones as strings, which
 * JSON cannot carry), character sequences, maps (keys as strings), iterables and arrays; anything
 * else as its {@code toString()}. Stateless; used for the small documents of the admin server.
 */
final class JsonWriter {

  private JsonWriter() {}

  static String write(Object value) {
    StringBuilder out = new StringBuilder();
    write(out, value);
    return out.toString();
  }

  static void write(StringBuilder out, Object value) {
    if (value == null) {
      out.append("null");
    } else if (value instanceof Boolean b) {
      out.append(b.booleanValue());
    } else if (value instanceof Double || value instanceof Float) {
      double d = ((Number) value).doubleValue();
      if (Double.isFinite(d)) {
        out.append(d == Math.rint(d) && Math.abs(d) < 1e15 ? Long.toString((long) d) : Double.toString(d));
      } else {
        string(out, Double.toString(d));
      }
    } else if (value instanceof Number n) {
      out.append(n);
    } else if (value instanceof Map<?, ?> map) {
      out.append('{');
      boolean first = true;
      for (Map.Entry<?, ?> e : map.entrySet()) {
        if (!first) {
          out.append(',');
        }
        first = false;
        string(out, String.valueOf(e.getKey()));
        out.append(':');
        write(out, e.getValue());
      }
      out.append('}');
    } else if (value instanceof Iterable<?> items) {
      out.append('[');
      boolean first = true;
      for (Object item : items) {
        if (!first) {
          out.append(',');
        }
        first = false;
        write(out, item);
      }
      out.append(']');
    } else if (value.getClass().isArray()) {
      out.append('[');
      int n = Array.getLength(value);
      for (int i = 0; i < n; i++) {
        if (i > 0) {
          out.append(',');
        }
        write(out, Array.get(value, i));
      }
      out.append(']');
    } else {
      string(out, value.toString());
    }
  }

  static void string(StringBuilder out, String s) {
    out.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        default -> {
          // Escaping '<' keeps "</script>" inert should the JSON ever be inlined into HTML.
          if (c < 0x20 || c == '<' || c == 0x2028 || c == 0x2029) {
            out.append(String.format("\\u%04x", (int) c));
          } else {
            out.append(c);
          }
        }
      }
    }
    out.append('"');
  }
}
