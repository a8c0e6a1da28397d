package dev.portage.hub.remote;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.portage.hub.cache.DiskCache;
import dev.portage.hub.cache.ResponseCacher;
import dev.portage.hub.proxy.RequestInfo;
import dev.portage.hub.proxy.RequestInfoResolver;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The tee of a get answer into the cache, and the keys it remembers answers by. */
class ResponseTeeTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String POD = "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":"
      + "\"pod-0\",\"namespace\":\"default\",\"resourceVersion\":\"7\"},\"spec\":{\"nodeName\":\"n1\"}}";

  @TempDir Path dir;
  private ResponseCacher teeCacher;
  private ResponseCacher directCacher;
  private final List<Runnable> writes = new ArrayList<>();
  private final CacheBacklog backlog = new CacheBacklog(1 << 20);
  private final LongAdder dropped = new LongAdder();

  @BeforeEach
  void setUp() throws IOException {
    teeCacher = new ResponseCacher(DiskCache.open(dir.resolve("tee")), JSON);
    directCacher = new ResponseCacher(DiskCache.open(dir.resolve("direct")), JSON);
  }

  private static RequestInfo get(String uri, String userAgent) {
    return RequestInfoResolver.resolve("GET", uri, userAgent);
  }

  private ResponseTee tee(RequestInfo info) {
    return new ResponseTee(info, teeCacher, writes::add, 1 << 20, dropped, backlog, null);
  }

  /** Feeds {@code body} in pieces of {@code piece} bytes, as an upstream's reads would. */
  private static List<ByteBuf> feed(ResponseTee tee, byte[] body, int piece) {
    List<ByteBuf> relayed = new ArrayList<>();
    for (int at = 0; at < body.length; at += piece) {
      ByteBuf b = Unpooled.copiedBuffer(body, at, Math.min(piece, body.length - at));
      tee.feed(b);
      b.skipBytes(b.readableBytes()); // the client's write consumes it; the tee's copy must not care
      relayed.add(b);
    }
    return relayed;
  }

  private void runWrites() {
    List<Runnable> queued = new ArrayList<>(writes);
    writes.clear();
    queued.forEach(Runnable::run);
  }

  @Test
  void teeStoresTheSameBytesAsCachingTheWholeBody() throws IOException {
    RequestInfo info = get("/api/v1/namespaces/default/pods/pod-0", "kubelet/v1.30.0");
    byte[] body = POD.getBytes(StandardCharsets.UTF_8);
    ResponseTee tee = tee(info);
    assertThat(tee.start("application/json", null)).isTrue();
    List<ByteBuf> relayed = feed(tee, body, 13);
    tee.finish();
    relayed.forEach(ByteBuf::release); // the client's writes are done with them
    assertThat(writes).hasSize(1);
    runWrites();
    assertThat(relayed).allSatisfy(b -> assertThat(b.refCnt()).isZero());

    assertThat(directCacher.cacheObject(info, body)).isTrue();
    var key = ResponseCacher.ref(info).key("default", "pod-0");
    DiskCache.Entry viaTee = teeCacher.cache().get(key).orElseThrow();
    DiskCache.Entry direct = directCacher.cache().get(key).orElseThrow();
    assertThat(viaTee.body()).isEqualTo(direct.body());
    assertThat(viaTee.resourceVersion()).isEqualTo("7");
    assertThat(dropped.sum()).isZero();
  }

  @Test
  void anIdenticalAnswerToAnEqualRequestIsNotQueuedAgain() {
    byte[] body = POD.getBytes(StandardCharsets.UTF_8);
    for (String uri : new String[] {"/api/v1/namespaces/default/pods/pod-0?a=1&b=2",
        "/api/v1/namespaces/default/pods/pod-0?b=2&a=1"}) {
      ResponseTee tee = tee(get(uri, "kubelet/v1.30.0"));
      assertThat(tee.start("application/json", null)).isTrue();
      List<ByteBuf> relayed = feed(tee, body, 100);
      tee.finish();
      relayed.forEach(ByteBuf::release);
    }
    assertThat(writes).hasSize(1); // the second answer was recognised by its key and checksum
    runWrites();
    // Another component's request is its own: queued.
    ResponseTee other = tee(get("/api/v1/namespaces/default/pods/pod-0?a=1&b=2", "kube-proxy/v1"));
    assertThat(other.start("application/json", null)).isTrue();
    List<ByteBuf> relayed = feed(other, body, 100);
    other.finish();
    relayed.forEach(ByteBuf::release);
    assertThat(writes).hasSize(1);
    runWrites();
  }

  @Test
  void backlogKeysAreEqualForEqualRequestsOnly() {
    Object a = ResponseTee.backlogKey(get("/api/v1/pods?watch=0&limit=5", "kubelet/v1"), null);
    Object b = ResponseTee.backlogKey(get("/api/v1/pods?limit=5&watch=0", "kubelet/v2"), null);
    assertThat(a).isEqualTo(b).hasSameHashCodeAs(b);
    assertThat(a).isNotEqualTo(ResponseTee.backlogKey(get("/api/v1/pods?limit=6&watch=0",
        "kubelet/v1"), null));
    assertThat(a).isNotEqualTo(ResponseTee.backlogKey(get("/api/v1/pods?watch=0&limit=5",
        "coredns/v1"), null));
    assertThat(a).isNotEqualTo(ResponseTee.backlogKey(
        get("/api/v1/namespaces/default/pods?watch=0&limit=5", "kubelet/v1"), null));
    assertThat(a).isNotEqualTo(ResponseTee.backlogKey(
        RequestInfoResolver.resolve("DELETE", "/api/v1/pods?watch=0&limit=5", "kubelet/v1"),
        null));

    RequestInfo discovery = get("/apis", "kubelet/v1");
    Object json = ResponseTee.backlogKey(discovery, "application/json");
    assertThat(json).isEqualTo(ResponseTee.backlogKey(get("/apis", "kubelet/v9"),
        "application/json"));
    assertThat(json).isNotEqualTo(ResponseTee.backlogKey(discovery,
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"));
    assertThat(json).isNotEqualTo(ResponseTee.backlogKey(discovery, null));
  }
  @Test
  void directBuffersInOneReadOrManyAreStoredAndChecksummedAlike() {
    RequestInfo info = get("/api/v1/namespaces/default/pods/pod-0", "kubelet/v1.30.0");
    byte[] body = POD.getBytes(StandardCharsets.UTF_8);
    List<ByteBuf> relayed = new ArrayList<>();
    for (int piece : new int[] {body.length, 7}) {
      ResponseTee tee = tee(info);
      assertThat(tee.start("application/json", null)).isTrue();
      for (int at = 0; at < body.length; at += piece) {
        int n = Math.min(piece, body.length - at);
        ByteBuf b = Unpooled.directBuffer(n + 3).writeBytes(new byte[3]).writeBytes(body, at, n);
        b.skipBytes(3); // the body starts past the buffer's first bytes, as a decoder leaves it
        tee.feed(b);
        b.skipBytes(b.readableBytes());
        relayed.add(b);
      }
      tee.finish();
    }
    relayed.forEach(ByteBuf::release);
    // One read or many, the same checksum: the second answer is recognised as unchanged.
    assertThat(writes).hasSize(1);
    assertThat(relayed.get(0).refCnt()).isOne(); // the queued write still holds the first body
    assertThat(relayed.subList(1, relayed.size()))
        .allSatisfy(b -> assertThat(b.refCnt()).isZero()); // the unchanged one: released at once
    runWrites();
    assertThat(relayed).allSatisfy(b -> assertThat(b.refCnt()).isZero());
    var key = ResponseCacher.ref(info).key("default", "pod-0");
    assertThat(teeCacher.cache().get(key).orElseThrow().body()).isEqualTo(body);
  }
}
