package dev.portage.hub.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Message;
import io.kubernetes.client.proto.Meta;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;

/**
 * What label and field selectors read of a cached object, whichever encoding it was cached in:
 * its labels, and the text of a field by its dotted path ({@code spec.nodeName}, {@code
 * metadata.namespace}); a missing field reads as "". Read-only views; not thread-safe.
 */
interface ObjectFields {

  /** {@code metadata.labels}. */
  Map<String, String> labels();

  /** The scalar at {@code path} as text, "" when absent or not a scalar. */
  String field(String[] path);

  /** A view of a JSON object. */
  static ObjectFields of(JsonNode object) {
    return new ObjectFields() {
      @Override
      public Map<String, String> labels() {
        JsonNode labels = object.path("metadata").path("labels");
        Map<String, String> out = new HashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = labels.fields(); it.hasNext(); ) {
          Map.Entry<String, JsonNode> e = it.next();
          out.put(e.getKey(), e.getValue().asText());
        }
        return out;
      }

      @Override
      public String field(String[] path) {
        JsonNode n = object;
        for (String p : path) {
          n = n.path(p);
        }
        return n.isValueNode() ? n.asText() : "";
      }
    };
  }

  /** A view of a decoded protobuf object (field 1 of every Kubernetes object is its metadata). */
  static ObjectFields of(Message object) {
    return new ObjectFields() {
      @Override
      public Map<String, String> labels() {
        FieldDescriptor f = object.getDescriptorForType().findFieldByNumber(1);
        if (f != null && object.hasField(f) && object.getField(f) instanceof Meta.ObjectMeta m) {
          return m.getLabelsMap();
        }
        return Map.of();
      }

      @Override
      public String field(String[] path) {
        Message m = object;
        for (int i = 0; i < path.length; i++) {
          FieldDescriptor f = m.getDescriptorForType().findFieldByName(path[i]);
          if (f == null || f.isRepeated() || !m.hasField(f)) {
            return "";
          }
          Object v = m.getField(f);
          if (i == path.length - 1) {
            return v instanceof Message ? "" : String.valueOf(v);
          }
          if (!(v instanceof Message next)) {
            return "";
          }
          m = next;
        }
        return "";
      }
    };
  }
}
