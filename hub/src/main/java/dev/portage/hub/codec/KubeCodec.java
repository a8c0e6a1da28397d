package dev.portage.hub.codec;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Objects;

/**
 * Converts single Kubernetes objects between JSON and protobuf, for any kind {@link KubeTypes}
 * knows: what lets the hub answer from its cache in the encoding a client asked for, whatever the
 * encoding the object was cached in. Thread-safe.
 */
public final class KubeCodec {

  private final ObjectMapper json;
  private final KubeTypes types;
  private final JsonProtoMapping mapping;

  public KubeCodec(ObjectMapper json, KubeTypes types) {
    this.json = Objects.requireNonNull(json, "json");
    this.types = Objects.requireNonNull(types, "types");
    this.mapping = new JsonProtoMapping(json, types);
  }

  public KubeTypes types() {
    return types;
  }

  /**
   * Decodes a protobuf body into the kind's generated message.
   *
   * @throws CodecException if the body is not protobuf or its kind has no protobuf form here
   */
  public Message decode(byte[] protobufBody) throws CodecException {
    return decode(ProtoEnvelope.decode(protobufBody));
  }

  /** Parses an envelope's object with its kind's generated class. */
  public Message decode(ProtoEnvelope.Decoded envelope) throws CodecException {
    Message prototype = prototype(envelope.apiVersion(), envelope.kind());
    try {
      return prototype.getParserForType().parseFrom(envelope.raw());
    } catch (InvalidProtocolBufferException e) {
      throw new CodecException(envelope.kind() + ": malformed protobuf: " + e.getMessage());
    }
  }

  /** A protobuf body → the same object as JSON (with {@code kind} and {@code apiVersion}). */
  public byte[] toJson(byte[] protobufBody) throws CodecException {
    ProtoEnvelope.Decoded env = ProtoEnvelope.decode(protobufBody);
    return toJson(decode(env), env.apiVersion(), env.kind());
  }

  /** {@code object}, a {@code kind}, as JSON. */
  public byte[] toJson(Message object, String apiVersion, String kind) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(object.getSerializedSize() * 2 + 64);
    try (JsonGenerator g = json.getFactory().createGenerator(out)) {
      mapping.writeObject(object, apiVersion, kind, g);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write JSON to memory", e);
    }
    return out.toByteArray();
  }

  /**
   * A JSON object → the same object as a protobuf body.
   *
   * @throws CodecException if it is not JSON, names no kind, or its kind has no protobuf form
   */
  public byte[] toProtobuf(byte[] jsonObject) throws CodecException {
    JsonNode node;
    try {
      node = json.readTree(jsonObject);
    } catch (IOException e) {
      throw new CodecException("not JSON: " + e.getMessage());
    }
    if (node == null || !node.isObject()) {
      throw new CodecException("not a JSON object");
    }
    return toProtobuf(node);
  }

  /** Like {@link #toProtobuf(byte[])} for a parsed object. */
  public byte[] toProtobuf(JsonNode object) throws CodecException {
    String apiVersion = object.path("apiVersion").asText("");
    String kind = object.path("kind").asText("");
    Message m = fromJson(object, apiVersion, kind);
    return ProtoEnvelope.encode(apiVersion, kind, m.toByteString());
  }

  /** A JSON object as the generated message of {@code kind} (its own kind/apiVersion ignored). */
  public Message fromJson(JsonNode object, String apiVersion, String kind) throws CodecException {
    Message.Builder b = prototype(apiVersion, kind).newBuilderForType();
    mapping.merge(object, b);
    return b.build();
  }

  /** Converts a body from one encoding to the other (or returns it when they are the same). */
  public byte[] convert(byte[] body, Encoding from, Encoding to) throws CodecException {
    if (from == to) {
      return body;
    }
    return to == Encoding.JSON ? toJson(body) : toProtobuf(body);
  }

  private Message prototype(String apiVersion, String kind) throws CodecException {
    if (kind.isEmpty()) {
      throw new CodecException("the object names no kind");
    }
    return types.prototype(apiVersion, kind).orElseThrow(() -> new CodecException(
        apiVersion + " " + kind + " has no protobuf form (custom resources are JSON only)"));
  }
}
