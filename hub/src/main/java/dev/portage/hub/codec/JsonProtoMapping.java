package dev.portage.hub.codec;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.protobuf.ByteString;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.MessageOrBuilder;
import java.io.IOException;
import java.time.DateTimeException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Base64;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The mapping between Kubernetes' JSON and its protobuf messages, driven by the messages'
 * descriptors, so one piece of code serves every kind. The JSON field names are the proto field
 * names (Kubernetes generates its {@code .proto} files from the Go types' JSON tags); what differs
 * is handled by the few rules Kubernetes' own types impose:
 *
 * <ul>
 *   <li>{@code meta/v1.Time} is an RFC 3339 string with seconds, {@code MicroTime} one with six
 *       decimals; a zero time is {@code null} in JSON and an empty message in protobuf;
 *   <li>{@code resource.Quantity} is its string; {@code intstr.IntOrString} a number or a string;
 *       {@code meta/v1.Duration} a Go duration string; {@code FieldsV1} and {@code
 *       runtime.RawExtension} are inline JSON in JSON and that JSON's bytes in protobuf;
 *   <li>a message whose only field is {@code repeated items = 1} ({@code Verbs}) is a JSON array;
 *   <li>an embedded Go struct ({@code json:",inline"}, e.g. {@code Volume.volumeSource}) has its
 *       fields lifted into the parent object in JSON ({@link #INLINE});
 *   <li>maps are JSON objects written in key order; bytes are base64; 64-bit integers are numbers.
 * </ul>
 *
 * <p>JSON fields the message does not know (newer than the generated classes) are dropped, as are
 * unknown protobuf fields on the way to JSON. Thread-safe.
 */
final class JsonProtoMapping {

  private static final String META = "k8s.io.apimachinery.pkg.apis.meta.v1.";
  private static final String TIME = META + "Time";
  private static final String MICRO_TIME = META + "MicroTime";
  private static final String DURATION = META + "Duration";
  private static final String FIELDS_V1 = META + "FieldsV1";
  private static final String QUANTITY = "k8s.io.apimachinery.pkg.api.resource.Quantity";
  private static final String INT_OR_STRING = "k8s.io.apimachinery.pkg.util.intstr.IntOrString";
  private static final String RAW_EXTENSION = "k8s.io.apimachinery.pkg.runtime.RawExtension";

  /**
   * Embedded Go structs whose JSON fields sit in the parent object ({@code json:",inline"}), by
   * message: a wire fact of the Kubernetes API types ({@code JsonProtoMappingTest} checks it
   * against the JSON model of every kind the hub encodes).
   */
  static final Map<String, Set<String>> INLINE = Map.ofEntries(
      Map.entry("k8s.io.api.core.v1.Volume", Set.of("volumeSource")),
      Map.entry("k8s.io.api.core.v1.PersistentVolumeSpec", Set.of("persistentVolumeSource")),
      Map.entry("k8s.io.api.core.v1.Probe", Set.of("handler")),
      Map.entry("k8s.io.api.core.v1.EphemeralContainer", Set.of("ephemeralContainerCommon")),
      Map.entry("k8s.io.api.core.v1.ConfigMapVolumeSource", Set.of("localObjectReference")),
      Map.entry("k8s.io.api.core.v1.ConfigMapProjection", Set.of("localObjectReference")),
      Map.entry("k8s.io.api.core.v1.ConfigMapEnvSource", Set.of("localObjectReference")),
      Map.entry("k8s.io.api.core.v1.ConfigMapKeySelector", Set.of("localObjectReference")),
      Map.entry("k8s.io.api.core.v1.SecretProjection", Set.of("localObjectReference")),
      Map.entry("k8s.io.api.core.v1.SecretEnvSource", Set.of("localObjectReference")),
      Map.entry("k8s.io.api.core.v1.SecretKeySelector", Set.of("localObjectReference")),
      Map.entry("k8s.io.api.networking.v1.IngressRule", Set.of("ingressRuleValue")),
      Map.entry("k8s.io.api.admissionregistration.v1.RuleWithOperations", Set.of("rule")),
      Map.entry("k8s.io.api.admissionregistration.v1.NamedRuleWithOperations",
          Set.of("ruleWithOperations")));

  /**
   * Proto field names that are not the JSON name (the Go field name was lower-cased differently),
   * by message and proto field name; also checked by {@code JsonProtoMappingTest}.
   */
  static final Map<String, String> RENAMED = Map.of(
      "k8s.io.api.networking.v1.IngressClassParametersReference.aPIGroup", "apiGroup",
      "k8s.io.api.authentication.v1.BoundObjectReference.uID", "uid",
      "k8s.io.api.admissionregistration.v1.MutatingWebhookConfiguration.Webhooks", "webhooks",
      "k8s.io.api.admissionregistration.v1.ValidatingWebhookConfiguration.Webhooks", "webhooks",
      "k8s.io.api.admissionregistration.v1.Validation.Expression", "expression",
      "k8s.io.api.admissionregistration.v1.Variable.Name", "name",
      "k8s.io.api.admissionregistration.v1.Variable.Expression", "expression");

  /** Go's {@code time.RFC3339} of a UTC time with whole seconds. */
  private static final DateTimeFormatter SECONDS =
      DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss'Z'").withZone(ZoneOffset.UTC);
  /** Go's {@code RFC3339Micro} of a UTC time. */
  private static final DateTimeFormatter MICROS =
      DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSSSSS'Z'").withZone(ZoneOffset.UTC);

  private final ObjectMapper json;
  private final KubeTypes types;
  /** JSON property name → the fields leading to it, per message (inline structs resolved). */
  private final Map<Descriptor, Map<String, FieldDescriptor[]>> properties = new ConcurrentHashMap<>();

  JsonProtoMapping(ObjectMapper json, KubeTypes types) {
    this.json = json;
    this.types = types;
  }

  // ---------------------------------------------------------------- JSON → protobuf

  /** Fills {@code builder} from the JSON object {@code object}. */
  void merge(JsonNode object, Message.Builder builder) throws CodecException {
    Descriptor d = builder.getDescriptorForType();
    if (!object.isObject()) {
      throw new CodecException(d.getName() + ": expected a JSON object, got " + object.getNodeType());
    }
    Map<String, FieldDescriptor[]> props = properties(d);
    for (Iterator<Map.Entry<String, JsonNode>> it = object.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      FieldDescriptor[] path = props.get(e.getKey());
      if (path == null) {
        continue; // kind/apiVersion, or a field newer than the generated classes
      }
      Message.Builder target = builder;
      for (int i = 0; i < path.length - 1; i++) {
        target = target.getFieldBuilder(path[i]);
      }
      setField(target, path[path.length - 1], e.getValue());
    }
    // Go always encodes an embedded struct (a value, never a pointer), even when it is empty.
    Set<String> inline = INLINE.get(d.getFullName());
    if (inline != null) {
      for (String name : inline) {
        FieldDescriptor f = d.findFieldByName(name);
        if (f != null && !builder.hasField(f)) {
          builder.getFieldBuilder(f);
        }
      }
    }
  }

  private void setField(Message.Builder b, FieldDescriptor f, JsonNode value)
      throws CodecException {
    if (value.isNull()) {
      if (!f.isRepeated() && isTime(f)) {
        b.setField(f, b.newBuilderForField(f).build()); // a zero (non-pointer) time
      }
      return;
    }
    if (f.isMapField()) {
      if (!value.isObject()) {
        throw mismatch(f, "a JSON object", value);
      }
      Descriptor entry = f.getMessageType();
      FieldDescriptor key = entry.findFieldByNumber(1);
      FieldDescriptor val = entry.findFieldByNumber(2);
      for (Iterator<Map.Entry<String, JsonNode>> it = value.fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> e = it.next();
        Message.Builder eb = b.newBuilderForField(f);
        eb.setField(key, e.getKey());
        if (!e.getValue().isNull()) {
          eb.setField(val, single(eb, val, e.getValue()));
        }
        b.addRepeatedField(f, eb.build());
      }
    } else if (f.isRepeated()) {
      if (!value.isArray()) {
        throw mismatch(f, "a JSON array", value);
      }
      for (JsonNode element : value) {
        if (!element.isNull()) {
          b.addRepeatedField(f, single(b, f, element));
        }
      }
    } else {
      b.setField(f, single(b, f, value));
    }
  }

  private Object single(Message.Builder parent, FieldDescriptor f, JsonNode v)
      throws CodecException {
    switch (f.getJavaType()) {
      case INT -> {
        if (!v.isIntegralNumber() || !v.canConvertToInt()) {
          throw mismatch(f, "a 32-bit integer", v);
        }
        return v.intValue();
      }
      case LONG -> {
        if (!v.isIntegralNumber() || !v.canConvertToLong()) {
          throw mismatch(f, "a 64-bit integer", v);
        }
        return v.longValue();
      }
      case DOUBLE -> {
        return requireNumber(f, v).doubleValue();
      }
      case FLOAT -> {
        return requireNumber(f, v).floatValue();
      }
      case BOOLEAN -> {
        if (!v.isBoolean()) {
          throw mismatch(f, "true or false", v);
        }
        return v.booleanValue();
      }
      case STRING -> {
        if (!v.isTextual()) {
          throw mismatch(f, "a string", v);
        }
        return v.textValue();
      }
      case BYTE_STRING -> {
        if (!v.isTextual()) {
          throw mismatch(f, "a base64 string", v);
        }
        try {
          return ByteString.copyFrom(Base64.getDecoder().decode(v.textValue()));
        } catch (IllegalArgumentException e) {
          throw mismatch(f, "a base64 string", v);
        }
      }
      case ENUM -> {
        var value = v.isTextual() ? f.getEnumType().findValueByName(v.textValue()) : null;
        if (value == null) {
          throw mismatch(f, "a value of " + f.getEnumType().getName(), v);
        }
        return value;
      }
      case MESSAGE -> {
        return message(parent.newBuilderForField(f), f, v);
      }
      default -> throw mismatch(f, f.getJavaType().toString(), v);
    }
  }

  private Message message(Message.Builder b, FieldDescriptor f, JsonNode v) throws CodecException {
    Descriptor d = b.getDescriptorForType();
    switch (d.getFullName()) {
      case TIME, MICRO_TIME -> {
        if (!v.isTextual()) {
          throw mismatch(f, "an RFC 3339 time", v);
        }
        if (!v.textValue().isEmpty()) {
          Instant t;
          try {
            t = OffsetDateTime.parse(v.textValue(), DateTimeFormatter.ISO_OFFSET_DATE_TIME)
                .toInstant();
          } catch (DateTimeException e) {
            throw mismatch(f, "an RFC 3339 time", v);
          }
          b.setField(d.findFieldByNumber(1), t.getEpochSecond());
          int micros = t.getNano() / 1000 * 1000;
          if (d.getFullName().equals(MICRO_TIME) && micros != 0) {
            b.setField(d.findFieldByNumber(2), micros);
          }
        }
        return b.build();
      }
      case DURATION -> {
        if (!v.isTextual()) {
          throw mismatch(f, "a duration such as \"1m30s\"", v);
        }
        try {
          b.setField(d.findFieldByNumber(1),
              dev.portage.core.time.GoDurations.parse(v.textValue()).toNanos());
        } catch (IllegalArgumentException e) {
          throw mismatch(f, "a duration such as \"1m30s\"", v);
        }
        return b.build();
      }
      case QUANTITY -> {
        if (!v.isTextual() && !v.isNumber()) {
          throw mismatch(f, "a quantity such as \"100m\"", v);
        }
        b.setField(d.findFieldByNumber(1), v.asText());
        return b.build();
      }
      case INT_OR_STRING -> {
        if (v.isTextual()) {
          b.setField(d.findFieldByNumber(1), 1L);
          b.setField(d.findFieldByNumber(3), v.textValue());
        } else if (v.isIntegralNumber() && v.canConvertToInt()) {
          b.setField(d.findFieldByNumber(1), 0L);
          b.setField(d.findFieldByNumber(2), v.intValue());
        } else {
          throw mismatch(f, "an integer or a string", v);
        }
        return b.build();
      }
      case FIELDS_V1, RAW_EXTENSION -> {
        try {
          b.setField(d.findFieldByNumber(1), ByteString.copyFrom(json.writeValueAsBytes(v)));
        } catch (IOException e) {
          throw mismatch(f, "JSON", v);
        }
        return b.build();
      }
      default -> {
        FieldDescriptor items = itemsOnly(d);
        if (items != null && v.isArray()) {
          setField(b, items, v);
          return b.build();
        }
        merge(v, b);
        return b.build();
      }
    }
  }

  /** JSON property names of {@code d}, the fields of inline structs lifted in. */
  private Map<String, FieldDescriptor[]> properties(Descriptor d) {
    Map<String, FieldDescriptor[]> props = properties.get(d);
    if (props != null) {
      return props;
    }
    Map<String, FieldDescriptor[]> out = new LinkedHashMap<>();
    Set<String> inline = INLINE.getOrDefault(d.getFullName(), Set.of());
    for (FieldDescriptor f : d.getFields()) {
      if (!inline.contains(f.getName())) {
        out.put(jsonName(f), new FieldDescriptor[] {f});
      }
    }
    for (FieldDescriptor f : d.getFields()) {
      if (inline.contains(f.getName()) && f.getJavaType() == FieldDescriptor.JavaType.MESSAGE) {
        for (Map.Entry<String, FieldDescriptor[]> e : properties(f.getMessageType()).entrySet()) {
          FieldDescriptor[] path = new FieldDescriptor[e.getValue().length + 1];
          path[0] = f;
          System.arraycopy(e.getValue(), 0, path, 1, e.getValue().length);
          out.putIfAbsent(e.getKey(), path);
        }
      }
    }
    properties.putIfAbsent(d, Map.copyOf(out));
    return properties.get(d);
  }

  // ---------------------------------------------------------------- protobuf → JSON

  /** Writes {@code m} as a JSON object whose first fields are {@code kind} and {@code apiVersion}. */
  void writeObject(MessageOrBuilder m, String apiVersion, String kind, JsonGenerator g)
      throws IOException {
    g.writeStartObject();
    g.writeStringField("kind", kind);
    g.writeStringField("apiVersion", apiVersion);
    writeFields(m, g);
    g.writeEndObject();
  }

  private void writeFields(MessageOrBuilder m, JsonGenerator g) throws IOException {
    Descriptor d = m.getDescriptorForType();
    Set<String> inline = INLINE.getOrDefault(d.getFullName(), Set.of());
    for (FieldDescriptor f : d.getFields()) {
      if (inline.contains(f.getName())) {
        if (m.hasField(f)) {
          writeFields((Message) m.getField(f), g);
        }
        continue;
      }
      if (f.isMapField()) {
        int n = m.getRepeatedFieldCount(f);
        if (n == 0) {
          continue;
        }
        FieldDescriptor key = f.getMessageType().findFieldByNumber(1);
        FieldDescriptor val = f.getMessageType().findFieldByNumber(2);
        TreeMap<String, Message> sorted = new TreeMap<>(); // Go writes map keys in order
        for (int i = 0; i < n; i++) {
          Message entry = (Message) m.getRepeatedField(f, i);
          sorted.put((String) entry.getField(key), entry);
        }
        g.writeObjectFieldStart(jsonName(f));
        for (Map.Entry<String, Message> e : sorted.entrySet()) {
          g.writeFieldName(e.getKey());
          writeValue(val, e.getValue().getField(val), g);
        }
        g.writeEndObject();
      } else if (f.isRepeated()) {
        int n = m.getRepeatedFieldCount(f);
        if (n == 0) {
          continue;
        }
        g.writeArrayFieldStart(jsonName(f));
        for (int i = 0; i < n; i++) {
          writeValue(f, m.getRepeatedField(f, i), g);
        }
        g.writeEndArray();
      } else if (m.hasField(f)) {
        g.writeFieldName(jsonName(f));
        writeValue(f, m.getField(f), g);
      }
    }
  }

  private void writeValue(FieldDescriptor f, Object v, JsonGenerator g) throws IOException {
    switch (f.getJavaType()) {
      case INT -> g.writeNumber((Integer) v);
      case LONG -> g.writeNumber((Long) v);
      case FLOAT -> g.writeNumber((Float) v);
      case DOUBLE -> g.writeNumber((Double) v);
      case BOOLEAN -> g.writeBoolean((Boolean) v);
      case STRING -> g.writeString((String) v);
      case BYTE_STRING -> g.writeString(Base64.getEncoder().encodeToString(((ByteString) v).toByteArray()));
      case ENUM -> g.writeString(((com.google.protobuf.Descriptors.EnumValueDescriptor) v).getName());
      case MESSAGE -> writeMessage((Message) v, g);
      default -> throw new IllegalStateException("unexpected field type " + f.getJavaType());
    }
  }

  private void writeMessage(Message m, JsonGenerator g) throws IOException {
    Descriptor d = m.getDescriptorForType();
    switch (d.getFullName()) {
      case TIME, MICRO_TIME -> {
        long seconds = (Long) m.getField(d.findFieldByNumber(1));
        int nanos = (Integer) m.getField(d.findFieldByNumber(2));
        if (seconds == 0 && nanos == 0) {
          g.writeNull(); // Go's zero time
        } else if (d.getFullName().equals(TIME)) {
          g.writeString(SECONDS.format(Instant.ofEpochSecond(seconds)));
        } else {
          g.writeString(MICROS.format(Instant.ofEpochSecond(seconds, nanos / 1000 * 1000L)));
        }
      }
      case DURATION -> g.writeString(GoDurations.format((Long) m.getField(d.findFieldByNumber(1))));
      case QUANTITY -> {
        FieldDescriptor s = d.findFieldByNumber(1);
        g.writeString(m.hasField(s) ? (String) m.getField(s) : "0");
      }
      case INT_OR_STRING -> {
        long type = (Long) m.getField(d.findFieldByNumber(1));
        if (type == 1) {
          g.writeString((String) m.getField(d.findFieldByNumber(3)));
        } else {
          g.writeNumber((Integer) m.getField(d.findFieldByNumber(2)));
        }
      }
      case FIELDS_V1 -> writeRawJson((ByteString) m.getField(d.findFieldByNumber(1)), g);
      case RAW_EXTENSION -> {
        ByteString raw = (ByteString) m.getField(d.findFieldByNumber(1));
        byte[] bytes = raw.toByteArray();
        if (ProtoEnvelope.hasMagic(bytes)) {
          writeEmbedded(bytes, g);
        } else {
          writeRawJson(raw, g);
        }
      }
      default -> {
        FieldDescriptor items = itemsOnly(d);
        if (items != null) {
          g.writeStartArray();
          for (int i = 0; i < m.getRepeatedFieldCount(items); i++) {
            writeValue(items, m.getRepeatedField(items, i), g);
          }
          g.writeEndArray();
          return;
        }
        g.writeStartObject();
        writeFields(m, g);
        g.writeEndObject();
      }
    }
  }

  /** A RawExtension that holds a protobuf object (a watch event's object): written as its JSON. */
  private void writeEmbedded(byte[] body, JsonGenerator g) throws IOException {
    try {
      ProtoEnvelope.Decoded env = ProtoEnvelope.decode(body);
      Message prototype = types.prototype(env.apiVersion(), env.kind()).orElse(null);
      if (prototype == null) {
        g.writeNull();
        return;
      }
      writeObject(prototype.getParserForType().parseFrom(env.raw()), env.apiVersion(), env.kind(), g);
    } catch (CodecException | InvalidProtocolBufferException e) {
      g.writeNull();
    }
  }

  private void writeRawJson(ByteString raw, JsonGenerator g) throws IOException {
    if (raw.isEmpty()) {
      g.writeNull();
      return;
    }
    JsonNode tree;
    try {
      tree = json.readTree(raw.newInput());
    } catch (IOException e) {
      g.writeNull(); // not JSON: nothing a JSON client could read
      return;
    }
    g.writeTree(tree);
  }

  // ---------------------------------------------------------------- shared

  /** The JSON property name of {@code f}: its proto name but for {@link #RENAMED}. */
  static String jsonName(FieldDescriptor f) {
    if (RENAMED.isEmpty()) {
      return f.getName();
    }
    String renamed = RENAMED.get(f.getFullName());
    return renamed == null ? f.getName() : renamed;
  }

  /** The single {@code repeated items = 1} field of a wrapper such as {@code Verbs}, else null. */
  private static FieldDescriptor itemsOnly(Descriptor d) {
    List<FieldDescriptor> fields = d.getFields();
    if (fields.size() == 1) {
      FieldDescriptor f = fields.get(0);
      if (f.isRepeated() && !f.isMapField() && f.getNumber() == 1 && f.getName().equals("items")) {
        return f;
      }
    }
    return null;
  }

  private static boolean isTime(FieldDescriptor f) {
    if (f.getJavaType() != FieldDescriptor.JavaType.MESSAGE) {
      return false;
    }
    String name = f.getMessageType().getFullName();
    return name.equals(TIME) || name.equals(MICRO_TIME);
  }

  private static JsonNode requireNumber(FieldDescriptor f, JsonNode v) throws CodecException {
    if (!v.isNumber()) {
      throw mismatch(f, "a number", v);
    }
    return v;
  }

  private static CodecException mismatch(FieldDescriptor f, String expected, JsonNode v) {
    String shown = v.toString();
    if (shown.length() > 40) {
      shown = shown.substring(0, 40) + "...";
    }
    return new CodecException(f.getContainingType().getName() + "." + f.getName() + ": " + shown
        + " (expected: " + expected + ")");
  }
}
