package dev.portage.control.source.files;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonStreamContext;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.portage.control.source.Kinds;
import dev.portage.control.store.ResourceKey;
import dev.portage.control.store.SourceObject;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads one file of Kubernetes-style YAML manifests: one or more documents separated by {@code ---},
 * each an object or a {@code kind: List} with {@code items}. All or nothing: any bad document makes
 * the whole file fail with a {@link ManifestException} naming file and line. Objects without a
 * namespace get {@code default}, as {@code kubectl apply} would give them. Stateless and thread-safe.
 */
final class ManifestParser {

  /** Namespace of objects that name none (kubectl's default). */
  static final String DEFAULT_NAMESPACE = "default";

  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

  private ManifestParser() {}

  /**
   * Parses {@code content}.
   *
   * @param fileName used in locations and messages
   * @param sourceVersion stored as every object's source version
   */
  static List<LocatedObject> parse(String fileName, byte[] content, String sourceVersion) throws ManifestException {
    List<LocatedObject> out = new ArrayList<>();
    try (JsonParser p = YAML.createParser(content)) {
      int document = -1;
      while (p.nextToken() != null) {
        document++;
        JsonLocation start = p.currentTokenLocation();
        String at = fileName + ":" + start.getLineNr();
        JsonNode doc = YAML.readTree(p);
        if (doc == null || doc.isNull() || doc.isMissingNode()) {
          continue; // empty document, e.g. a trailing ---
        }
        if (!(doc instanceof ObjectNode obj)) {
          throw new ManifestException(at + ": expected a Kubernetes object (a mapping), got " + doc.getNodeType());
        }
        if ("List".equals(obj.path("kind").asText()) && obj.has("items")) {
          JsonNode items = obj.get("items");
          if (!items.isArray()) {
            throw new ManifestException(at + ": items of a List must be a sequence");
          }
          for (int i = 0; i < items.size(); i++) {
            LocatedObject o = object(items.get(i), at + " (items[" + i + "])", sourceVersion);
            checkFields(o, fileName, content, document, "/items/" + i);
            out.add(o);
          }
        } else {
          LocatedObject o = object(obj, at, sourceVersion);
          checkFields(o, fileName, content, document, "");
          out.add(o);
        }
      }
    } catch (JsonProcessingException e) {
      JsonLocation loc = e.getLocation();
      String where = loc == null ? fileName : fileName + ":" + loc.getLineNr() + ":" + loc.getColumnNr();
      throw new ManifestException(where + ": " + describe(e), e);
    } catch (IOException e) {
      throw new ManifestException(fileName + ": " + e, e);
    }
    return out;
  }

  private static LocatedObject object(JsonNode node, String at, String sourceVersion) throws ManifestException {
    if (!(node instanceof ObjectNode obj)) {
      throw new ManifestException(at + ": expected a Kubernetes object (a mapping), got " + node.getNodeType());
    }
    ResourceKey key;
    try {
      key = SourceObject.keyOf(obj);
    } catch (IllegalArgumentException e) {
      throw new ManifestException(at + ": " + e.getMessage(), e);
    }
    if (!Kinds.isSupported(key.kind())) {
      throw new ManifestException(at + ": unknown kind " + key.kind() + " (expected one of " + Kinds.ALL + ")");
    }
    if (!obj.path("metadata").isObject()) {
      throw new ManifestException(at + ": metadata must be a mapping");
    }
    if (key.namespace().isEmpty()) {
      ((ObjectNode) obj.get("metadata")).put("namespace", DEFAULT_NAMESPACE);
      key = new ResourceKey(key.kind(), DEFAULT_NAMESPACE, key.name());
    }
    return new LocatedObject(new SourceObject(key, sourceVersion, obj), at);
  }

  /**
   * Refuses an object whose endpoint addresses or ports are invalid ({@link EndpointFieldCheck}),
   * naming the line of the bad value.
   *
   * @param prefix JSON pointer of the object within its document ({@code /items/2} in a List)
   */
  private static void checkFields(LocatedObject o, String fileName, byte[] content, int document, String prefix)
      throws ManifestException {
    SourceObject object = o.object();
    EndpointFieldCheck.Problem problem = EndpointFieldCheck.check(object.key().kind(), object.body());
    if (problem == null) {
      return;
    }
    int line = lineOf(content, document, prefix + problem.pointer());
    String at = line > 0 ? fileName + ":" + line : o.location();
    throw new ManifestException(at + ": " + object.key() + ": " + problem.message());
  }

  /**
   * The line of the value at {@code pointer} in the {@code document}-th document of {@code content}
   * (0-based, as {@link #parse} counts them), or -1. Parsed trees keep no locations, so the file is
   * read once more; only a refused file pays for it.
   */
  private static int lineOf(byte[] content, int document, String pointer) {
    try (JsonParser p = YAML.createParser(content)) {
      int doc = -1;
      JsonToken t;
      while ((t = p.nextToken()) != null) {
        if (t == JsonToken.FIELD_NAME || t.isStructEnd()) {
          continue;
        }
        // A value token; a container's context is its own, its place is in the parent's.
        JsonStreamContext place = t.isStructStart() ? p.getParsingContext().getParent() : p.getParsingContext();
        if (place.inRoot()) {
          doc++;
        }
        if (doc == document && place.pathAsPointer().toString().equals(pointer)) {
          return p.currentTokenLocation().getLineNr();
        }
        if (doc > document) {
          return -1;
        }
      }
    } catch (IOException e) {
      // the file parsed a moment ago; nothing better to report than the document's line
    }
    return -1;
  }

  /**
   * The parser's message on one line. SnakeYAML's spans several: context and problem at the start of
   * a line ("while parsing a flow sequence", "expected ',' or ']', but got <stream end>"), marks and
   * source excerpts indented; the location is already in the prefix, so keep the unindented lines.
   */
  private static String describe(JsonProcessingException e) {
    String s = e.getOriginalMessage();
    if (s == null || s.isBlank()) {
      return "malformed YAML";
    }
    StringBuilder out = new StringBuilder();
    for (String line : s.split("\n")) {
      if (!line.isBlank() && !Character.isWhitespace(line.charAt(0))) {
        out.append(out.isEmpty() ? "" : ": ").append(line.strip());
      }
    }
    return out.isEmpty() ? s.strip() : out.toString();
  }

}
