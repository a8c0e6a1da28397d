package dev.portage.hub.cache;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * One streaming pass over a Kubernetes list body ({@code {"kind": "PodList", "metadata": {...},
 * "items": [...]}}) that finds the list's kind, apiVersion, resourceVersion and continue token, and
 * for each item its byte span in the body and the few fields the cache needs (name, namespace,
 * resourceVersion, whether it names its kind). Nothing is built into a tree: a list of 1,000 pods
 * is cached by copying each item's bytes, not by parsing and serialising it. Immutable once built.
 *
 * @param kind the list's kind, "" when absent
 * @param apiVersion the list's apiVersion, "" when absent
 * @param resourceVersion {@code metadata.resourceVersion}, "" when absent
 * @param continueToken {@code metadata.continue}, "" when absent
 * @param items the items, in order; null when {@code items} is not an array
 */
record ListScan(
    String kind, String apiVersion, String resourceVersion, String continueToken,
    List<Item> items) {

  /**
   * One item of the list: bytes {@code [start, end)} of the body hold its JSON object.
   *
   * @param hasKind whether the item has a non-null {@code kind} (list items usually do not)
   * @param hasApiVersion whether the item has a non-null {@code apiVersion}
   * @param kind the item's own kind, "" when absent
   */
  record Item(int start, int end, String name, String namespace, String resourceVersion,
      boolean hasKind, boolean hasApiVersion, String kind) {}

  /**
   * Scans {@code body}.
   *
   * @throws IOException if the body is not JSON or not a JSON object
   */
  static ListScan of(JsonFactory factory, byte[] body) throws IOException {
    try (JsonParser p = factory.createParser(body)) {
      if (p.nextToken() != JsonToken.START_OBJECT) {
        throw new IOException("not a JSON object");
      }
      String kind = "";
      String apiVersion = "";
      String rv = "";
      String cont = "";
      List<Item> items = null;
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String field = p.currentName();
        JsonToken value = p.nextToken();
        switch (field) {
          case "kind" -> kind = text(p, value);
          case "apiVersion" -> apiVersion = text(p, value);
          case "metadata" -> {
            if (value != JsonToken.START_OBJECT) {
              p.skipChildren();
              break;
            }
            while (p.nextToken() == JsonToken.FIELD_NAME) {
              String m = p.currentName();
              JsonToken v = p.nextToken();
              switch (m) {
                case "resourceVersion" -> rv = text(p, v);
                case "continue" -> cont = text(p, v);
                default -> p.skipChildren();
              }
            }
          }
          case "items" -> {
            if (value != JsonToken.START_ARRAY) {
              p.skipChildren();
              break;
            }
            items = new ArrayList<>();
            JsonToken t;
            while ((t = p.nextToken()) != JsonToken.END_ARRAY && t != null) {
              if (t == JsonToken.START_OBJECT) {
                items.add(item(p));
              } else {
                p.skipChildren();
              }
            }
          }
          default -> p.skipChildren();
        }
      }
      return new ListScan(kind, apiVersion, rv, cont, items);
    }
  }

  /** Reads one item; the parser is on its START_OBJECT and is left on its END_OBJECT. */
  private static Item item(JsonParser p) throws IOException {
    int start = (int) p.currentTokenLocation().getByteOffset();
    String name = "";
    String namespace = "";
    String rv = "";
    String kind = "";
    boolean hasKind = false;
    boolean hasApiVersion = false;
    while (p.nextToken() == JsonToken.FIELD_NAME) {
      String field = p.currentName();
      JsonToken value = p.nextToken();
      switch (field) {
        case "kind" -> {
          hasKind = value != JsonToken.VALUE_NULL;
          kind = text(p, value);
        }
        case "apiVersion" -> {
          hasApiVersion = value != JsonToken.VALUE_NULL;
          p.skipChildren();
        }
        case "metadata" -> {
          if (value != JsonToken.START_OBJECT) {
            p.skipChildren();
            break;
          }
          while (p.nextToken() == JsonToken.FIELD_NAME) {
            String m = p.currentName();
            JsonToken v = p.nextToken();
            switch (m) {
              case "name" -> name = text(p, v);
              case "namespace" -> namespace = text(p, v);
              case "resourceVersion" -> rv = text(p, v);
              default -> p.skipChildren();
            }
          }
        }
        default -> p.skipChildren();
      }
    }
    int end = (int) p.currentLocation().getByteOffset();
    return new Item(start, end, name, namespace, rv, hasKind, hasApiVersion, kind);
  }

  /** A scalar's text ("" for null, objects and arrays, which are skipped). */
  private static String text(JsonParser p, JsonToken value) throws IOException {
    if (value == JsonToken.VALUE_STRING || value == JsonToken.VALUE_NUMBER_INT
        || value == JsonToken.VALUE_NUMBER_FLOAT || value == JsonToken.VALUE_TRUE
        || value == JsonToken.VALUE_FALSE) {
      return p.getText();
    }
    p.skipChildren();
    return "";
  }
}
