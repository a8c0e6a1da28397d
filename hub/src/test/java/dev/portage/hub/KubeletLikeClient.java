package dev.portage.hub;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import io.kubernetes.client.proto.Meta;
import io.kubernetes.client.proto.Runtime;
import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.GZIPInputStream;

/**
 * Sends requests the way the kubelet's client-go does (v1.32, protobuf content type): its
 * User-Agent, {@code Accept: application/vnd.kubernetes.protobuf,application/json}, {@code
 * Accept-Encoding: gzip} (Go's transport adds it), informer list and watch parameters, protobuf
 * request bodies; and decodes answers as client-go does (gzip, the {@code k8s\0} envelope, watch
 * frames). A client configured for JSON sends {@code Accept: application/json} instead.
 */
final class KubeletLikeClient {

  static final String USER_AGENT = "kubelet/v1.32.0 (linux/amd64) kubernetes/70d3cc9";
  static final String PROTOBUF_ACCEPT = "application/vnd.kubernetes.protobuf,application/json";

  private final HttpClient http =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  private final String base;
  private final String accept;

  KubeletLikeClient(String base, String accept) {
    this.base = base;
    this.accept = accept;
  }

  /** A decoded answer: status, content type and body (unzipped). */
  record Answer(int code, String contentType, byte[] body) {

    /** The protobuf envelope's object, parsed with {@code prototype}'s class. */
    <T extends Message> T object(T prototype) {
      assertThat(contentType).startsWith(KubeApiStandIn.PROTOBUF);
      try {
        Runtime.Unknown u = unknown(body);
        @SuppressWarnings("unchecked")
        T t = (T) prototype.getParserForType().parseFrom(u.getRaw());
        return t;
      } catch (InvalidProtocolBufferException e) {
        throw new AssertionError(e);
      }
    }

    /** The envelope's kind. */
    String kind() {
      try {
        return unknown(body).getTypeMeta().getKind();
      } catch (InvalidProtocolBufferException e) {
        throw new AssertionError(e);
      }
    }

    String text() {
      return new String(body, StandardCharsets.UTF_8);
    }
  }

  static Runtime.Unknown unknown(byte[] body) throws InvalidProtocolBufferException {
    assertThat(body.length).isGreaterThan(4);
    assertThat(new byte[] {body[0], body[1], body[2], body[3]})
        .containsExactly(0x6b, 0x38, 0x73, 0x00);
    return Runtime.Unknown.parseFrom(ByteString.copyFrom(body, 4, body.length - 4));
  }

  private HttpRequest.Builder request(String pathAndQuery) {
    return HttpRequest.newBuilder(URI.create(base + pathAndQuery))
        .header("User-Agent", USER_AGENT)
        .header("Accept", accept)
        .header("Accept-Encoding", "gzip")
        .timeout(Duration.ofSeconds(20));
  }

  private Answer send(HttpRequest request) throws IOException, InterruptedException {
    HttpResponse<byte[]> r = http.send(request, HttpResponse.BodyHandlers.ofByteArray());
    byte[] body = r.body();
    if (r.headers().firstValue("Content-Encoding").orElse("").equals("gzip")) {
      try (InputStream in = new GZIPInputStream(new ByteArrayInputStream(body))) {
        body = in.readAllBytes();
      }
    }
    return new Answer(r.statusCode(), r.headers().firstValue("Content-Type").orElse(""), body);
  }

  Answer get(String path) throws IOException, InterruptedException {
    return send(request(path).GET().build());
  }

  /** An informer's first list: {@code ?fieldSelector=...&limit=500&resourceVersion=0}. */
  Answer list(String collection, String fieldSelector) throws IOException, InterruptedException {
    return list(collection, fieldSelector, "");
  }

  /** An informer's first list with a field and a label selector ("" for none). */
  Answer list(String collection, String fieldSelector, String labelSelector)
      throws IOException, InterruptedException {
    String q = (fieldSelector.isEmpty() ? "" : "fieldSelector=" + enc(fieldSelector) + "&")
        + (labelSelector.isEmpty() ? "" : "labelSelector=" + enc(labelSelector) + "&");
    return get(collection + "?" + q + "limit=500&resourceVersion=0");
  }

  /** Items of a protobuf list, parsed with {@code itemPrototype}'s class. */
  static <T extends Message> List<T> items(Answer list, T itemPrototype) {
    assertThat(list.code()).as(list.text()).isEqualTo(200);
    try {
      Runtime.Unknown u = unknown(list.body());
      assertThat(u.getTypeMeta().getKind()).endsWith("List");
      var view = dev.portage.hub.codec.pb.HubViews.ListView.parseFrom(u.getRaw());
      List<T> out = new ArrayList<>();
      for (ByteString item : view.getItemsList()) {
        @SuppressWarnings("unchecked")
        T t = (T) itemPrototype.getParserForType().parseFrom(item);
        out.add(t);
      }
      return out;
    } catch (InvalidProtocolBufferException e) {
      throw new AssertionError(e);
    }
  }

  /** The list's {@code metadata.resourceVersion}. */
  static String listResourceVersion(Answer list) {
    try {
      return dev.portage.hub.codec.pb.HubViews.ListView.parseFrom(unknown(list.body()).getRaw())
          .getMetadata().getResourceVersion();
    } catch (InvalidProtocolBufferException e) {
      throw new AssertionError(e);
    }
  }

  /** A reflector's watch, as client-go sends it; the stream is read frame by frame. */
  Watch watch(String collection, String fieldSelector, String resourceVersion, int timeoutSeconds)
      throws IOException, InterruptedException {
    String q = "allowWatchBookmarks=true&"
        + (fieldSelector.isEmpty() ? "" : "fieldSelector=" + enc(fieldSelector) + "&")
        + "resourceVersion=" + resourceVersion + "&timeout=" + timeoutSeconds + "s&timeoutSeconds="
        + timeoutSeconds + "&watch=true";
    HttpResponse<InputStream> r = http.send(request(collection + "?" + q).GET().build(),
        HttpResponse.BodyHandlers.ofInputStream());
    return new Watch(r.statusCode(), r.headers().firstValue("Content-Type").orElse(""),
        new DataInputStream(r.body()));
  }

  /** An open watch stream. */
  record Watch(int code, String contentType, DataInputStream in) implements AutoCloseable {

    /** The next event, or null when the server ended the stream. */
    Meta.WatchEvent next() throws IOException {
      int length;
      try {
        length = in.readInt();
      } catch (EOFException e) {
        return null;
      }
      byte[] frame = in.readNBytes(length);
      return Meta.WatchEvent.parseFrom(frame);
    }

    @Override
    public void close() throws IOException {
      in.close();
    }
  }

  /** The node Lease renewal: a PUT with a protobuf body. */
  Answer renewLease(String node, byte[] leaseBody) throws IOException, InterruptedException {
    return send(request("/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/" + node
        + "?timeout=10s")
        .header("Content-Type", KubeApiStandIn.PROTOBUF)
        .PUT(HttpRequest.BodyPublishers.ofByteArray(leaseBody)).build());
  }

  /** The node status update: a strategic merge patch (JSON), answered in protobuf. */
  Answer patchNodeStatus(String node, String patch) throws IOException, InterruptedException {
    return send(request("/api/v1/nodes/" + node + "/status?timeout=10s")
        .header("Content-Type", "application/strategic-merge-patch+json")
        .method("PATCH", HttpRequest.BodyPublishers.ofString(patch)).build());
  }

  /** An event, created with a protobuf body. */
  Answer createEvent(String namespace, byte[] eventBody) throws IOException, InterruptedException {
    return send(request("/api/v1/namespaces/" + namespace + "/events")
        .header("Content-Type", KubeApiStandIn.PROTOBUF)
        .POST(HttpRequest.BodyPublishers.ofByteArray(eventBody)).build());
  }

  Answer delete(String path) throws IOException, InterruptedException {
    return send(request(path).DELETE().build());
  }

  private static String enc(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }
}
