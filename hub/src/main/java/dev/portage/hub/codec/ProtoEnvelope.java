package dev.portage.hub.codec;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.UnsafeByteOperations;
import io.kubernetes.client.proto.Runtime;
import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * The body of every non-streamed Kubernetes protobuf message: the 4 bytes {@code k8s\0} followed by
 * one {@code runtime.Unknown} whose {@code typeMeta} names the kind and whose {@code raw} holds the
 * object's own message (objects carry no kind of their own). Encoded like kube-apiserver: fields in
 * order, the empty {@code contentEncoding} and {@code contentType} written too. Stateless.
 */
public final class ProtoEnvelope {

  /** {@code k8s} and encoding byte 0. */
  private static final byte[] MAGIC = {0x6b, 0x38, 0x73, 0x00};

  private ProtoEnvelope() {}

  /** A decoded envelope: the kind and the object's own encoded message. */
  public record Decoded(String apiVersion, String kind, ByteString raw) {}

  /** Whether {@code body} starts with the protobuf magic. */
  public static boolean hasMagic(byte[] body) {
    if (body.length < MAGIC.length) {
      return false;
    }
    for (int i = 0; i < MAGIC.length; i++) {
      if (body[i] != MAGIC[i]) {
        return false;
      }
    }
    return true;
  }

  /**
   * Decodes a protobuf body.
   *
   * @throws CodecException as client-go words it: "does not appear to be a protobuf message",
   *     "empty body", or the protobuf parser's error
   */
  public static Decoded decode(byte[] body) throws CodecException {
    if (!hasMagic(body)) {
      throw new CodecException("provided data does not appear to be a protobuf message, expected"
          + " prefix [107 56 115 0]");
    }
    if (body.length == MAGIC.length) {
      throw new CodecException("empty body");
    }
    try {
      // Wrapped, not copied: the parsed raw bytes alias the body, which nobody changes.
      Runtime.Unknown u = Runtime.Unknown.parseFrom(
          UnsafeByteOperations.unsafeWrap(body, MAGIC.length, body.length - MAGIC.length));
      return new Decoded(u.getTypeMeta().getApiVersion(), u.getTypeMeta().getKind(), u.getRaw());
    } catch (InvalidProtocolBufferException e) {
      throw new CodecException("malformed protobuf envelope: " + e.getMessage());
    }
  }

  /** Encodes {@code raw}, an object of {@code kind}, as a complete protobuf body. */
  public static byte[] encode(String apiVersion, String kind, ByteString raw) {
    Runtime.TypeMeta typeMeta =
        Runtime.TypeMeta.newBuilder().setApiVersion(apiVersion).setKind(kind).build();
    // Go's generated code writes every non-pointer field, so the empty contentEncoding (3) and
    // contentType (4) are on the wire; the Java builder would omit them unless set explicitly.
    Runtime.Unknown unknown = Runtime.Unknown.newBuilder()
        .setTypeMeta(typeMeta)
        .setRaw(raw)
        .setContentEncoding("")
        .setContentType("")
        .build();
    byte[] out = new byte[MAGIC.length + unknown.getSerializedSize()];
    System.arraycopy(MAGIC, 0, out, 0, MAGIC.length);
    CodedOutputStream cos = CodedOutputStream.newInstance(out, MAGIC.length, out.length - MAGIC.length);
    try {
      unknown.writeTo(cos);
      cos.checkNoSpaceLeft();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot encode into an array of the right size", e);
    }
    return out;
  }
}
