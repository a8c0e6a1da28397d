package dev.portage.hub.local;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.protobuf.ByteString;
import com.google.protobuf.Message;
import dev.portage.hub.cache.DiskCache;
import dev.portage.hub.codec.CodecException;
import dev.portage.hub.codec.Encoding;
import dev.portage.hub.codec.KubeCodec;
import dev.portage.hub.codec.ProtoEnvelope;
import dev.portage.hub.codec.pb.HubViews;
import io.kubernetes.client.proto.Meta;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Builds a list answer from cached objects in one encoding, whatever encodings they were cached
 * in: a JSON {@code {"kind": "PodList", ...}} with each JSON item's own bytes, or a protobuf
 * {@code PodList} (an envelope whose raw message holds each item's bytes). Objects cached in the
 * other encoding are converted; selectors decode an object only when there is a selector. An
 * object that cannot be read or converted is left out and logged. Thread-safe (stateless per
 * call).
 */
final class ListAssembler {

  private static final Logger log = LoggerFactory.getLogger(ListAssembler.class);

  private final ObjectMapper json;
  private final KubeCodec codec;

  ListAssembler(ObjectMapper json, KubeCodec codec) {
    this.json = json;
    this.codec = codec;
  }

  /** A built list: its body, the number of items, and the kind of its items. */
  record Built(byte[] body, int items, String kind) {}

  /**
   * Builds the list of the {@code entries} the selectors select.
   *
   * @param meta the list metadata last cached for the resource; null if none was
   * @param groupVersion the request's group/version, for objects that name none
   * @return null when neither the metadata nor any object tells the kind
   */
  Built build(List<DiskCache.Entry> entries, DiskCache.ListMeta meta, String groupVersion,
      LabelSelector labels, FieldSelector fields, Encoding target) {
    boolean select = !labels.selectsAll() || !fields.selectsAll();
    // JSON objects are parsed only to select them, to convert them, or to learn the list's kind.
    boolean parseJson = select || meta == null || target == Encoding.PROTOBUF;
    String listKind = meta == null ? "" : meta.kind();
    String apiVersion = meta == null ? "" : meta.apiVersion();
    List<byte[]> jsonItems = new ArrayList<>();
    List<ByteString> protoItems = new ArrayList<>();
    long maxRv = -1;
    for (DiskCache.Entry e : entries) {
      Item item;
      try {
        item = Item.read(e, json, codec, select, parseJson);
      } catch (CodecException | IOException ex) {
        log.warn("skipping unreadable cached object {}: {}", e.key(), ex.getMessage());
        continue;
      }
      if (listKind.isEmpty() && !item.kind.isEmpty()) {
        listKind = item.kind + "List";
        apiVersion = item.apiVersion;
      }
      if (select && !(labels.test(item.fields) && fields.test(item.fields))) {
        continue;
      }
      try {
        if (target == Encoding.JSON) {
          jsonItems.add(item.json(codec));
        } else {
          protoItems.add(item.protobuf(codec));
        }
      } catch (CodecException ex) {
        log.warn("cannot answer cached object {} in {}: {}", e.key(), target, ex.getMessage());
        continue;
      }
      maxRv = Math.max(maxRv, parseRv(e.resourceVersion()));
    }
    if (listKind.isEmpty() || listKind.equals("List") && meta == null) {
      return null;
    }
    if (apiVersion.isEmpty()) {
      apiVersion = groupVersion;
    }
    String rv = meta != null && !meta.resourceVersion().isEmpty()
        ? meta.resourceVersion()
        : maxRv >= 0 ? Long.toString(maxRv) : "0";
    if (meta != null && maxRv > parseRv(rv)) {
      rv = Long.toString(maxRv);
    }
    String itemKind = listKind.endsWith("List")
        ? listKind.substring(0, listKind.length() - "List".length()) : listKind;
    if (target == Encoding.JSON) {
      return new Built(jsonList(listKind, apiVersion, rv, jsonItems), jsonItems.size(), itemKind);
    }
    HubViews.ListView list = HubViews.ListView.newBuilder()
        .setMetadata(Meta.ListMeta.newBuilder().setResourceVersion(rv))
        .addAllItems(protoItems)
        .build();
    return new Built(ProtoEnvelope.encode(apiVersion, listKind, list.toByteString()),
        protoItems.size(), itemKind);
  }

  private byte[] jsonList(String kind, String apiVersion, String rv, List<byte[]> items) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(
        items.stream().mapToInt(b -> b.length + 1).sum() + 128);
    try {
      out.writeBytes(("{\"kind\":" + json.writeValueAsString(kind) + ",\"apiVersion\":"
          + json.writeValueAsString(apiVersion) + ",\"metadata\":{\"resourceVersion\":"
          + json.writeValueAsString(rv) + "},\"items\":[").getBytes(StandardCharsets.UTF_8));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot encode a string", e); // never for a String
    }
    for (int i = 0; i < items.size(); i++) {
      if (i > 0) {
        out.write(',');
      }
      out.writeBytes(items.get(i)); // each a JSON object the cache wrote and checksummed
    }
    out.writeBytes("]}".getBytes(StandardCharsets.US_ASCII));
    return out.toByteArray();
  }

  private static long parseRv(String rv) {
    try {
      return Long.parseLong(rv);
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  /** One cached object, decoded only as far as the list needs. */
  private static final class Item {
    final DiskCache.Entry entry;
    final String kind;
    final String apiVersion;
    final JsonNode tree; // JSON objects, when parsed
    final ProtoEnvelope.Decoded envelope; // protobuf objects
    final Message decoded; // protobuf objects, when a selector needed them decoded
    final ObjectFields fields; // null without selectors

    private Item(DiskCache.Entry entry, String kind, String apiVersion, JsonNode tree,
        ProtoEnvelope.Decoded envelope, Message decoded, ObjectFields fields) {
      this.entry = entry;
      this.kind = kind;
      this.apiVersion = apiVersion;
      this.tree = tree;
      this.envelope = envelope;
      this.decoded = decoded;
      this.fields = fields;
    }

    static Item read(DiskCache.Entry e, ObjectMapper json, KubeCodec codec, boolean select,
        boolean parseJson) throws CodecException, IOException {
      if (e.encoding() == Encoding.PROTOBUF) {
        ProtoEnvelope.Decoded env = ProtoEnvelope.decode(e.body());
        Message decoded = select ? codec.decode(env) : null;
        return new Item(e, env.kind(), env.apiVersion(), null, env, decoded,
            decoded == null ? null : ObjectFields.of(decoded));
      }
      if (!parseJson) {
        return new Item(e, "", "", null, null, null, null);
      }
      JsonNode tree = json.readTree(e.body());
      if (tree == null || !tree.isObject()) {
        throw new IOException("not a JSON object");
      }
      return new Item(e, tree.path("kind").asText(""), tree.path("apiVersion").asText(""), tree,
          null, null, select ? ObjectFields.of(tree) : null);
    }

    byte[] json(KubeCodec codec) throws CodecException {
      if (entry.encoding() == Encoding.JSON) {
        return entry.body();
      }
      return decoded != null ? codec.toJson(decoded, envelope.apiVersion(), envelope.kind())
          : codec.toJson(entry.body());
    }

    ByteString protobuf(KubeCodec codec) throws CodecException {
      if (entry.encoding() == Encoding.PROTOBUF) {
        return envelope.raw();
      }
      return codec.fromJson(tree, apiVersion, kind).toByteString();
    }
  }
}
