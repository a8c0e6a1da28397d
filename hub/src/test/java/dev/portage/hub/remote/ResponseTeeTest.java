package dev.portage.hub.remote;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.portage.hub.cache.DiskCache;
import dev.portage.hub.cache.ResponseCacher;
import dev.portage.hub.proxy.RequestInfo;
import dev.portage.hub.proxy.RequestInfoCache;
import dev.portage.hub.proxy.RequestInfoResolver;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;
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

  @Test
  void aDirectReadLargerThanTheScratchArrayIsChecksummedWhole() {
    byte[] body = new byte[2 * ResponseTee.CHECKSUM_SCRATCH_SIZE + 123];
    new java.util.Random(7).nextBytes(body);
    ByteBuf direct = PooledByteBufAllocator.DEFAULT.directBuffer(body.length + 5);
    try {
      direct.writeBytes(new byte[5]).writeBytes(body);
      CRC32C expected = new CRC32C();
      expected.update(body, 17, body.length - 17);
      CRC32C viaCopy = new CRC32C();
      ResponseTee.checksum(viaCopy, direct, 5 + 17, body.length - 17);
      assertThat(viaCopy.getValue()).isEqualTo(expected.getValue());
      assertThat(direct.readerIndex()).isZero(); // the relay's bytes and indexes are left alone
    } finally {
      direct.release();
    }
  }

  @Test
  void slicesOfAPooledBufferAreChecksummedAsTheirOwnBytes() {
    RequestInfo info = get("/api/v1/namespaces/default/pods/pod-0", "kubelet/v1.30.0");
    byte[] body = POD.getBytes(StandardCharsets.UTF_8);
    ByteBuf read = PooledByteBufAllocator.DEFAULT.directBuffer(body.length + 20);
    read.writeBytes(new byte[11]).writeBytes(body).writeBytes(new byte[9]);
    // How the codec hands a body on: slices of the read's buffer, past its first bytes.
    ByteBuf whole = read.retainedSlice(11, body.length);
    for (int from : new int[] {0, 5, body.length - 1}) {
      CRC32C expected = new CRC32C();
      expected.update(body, from, body.length - from);
      CRC32C viaCopy = new CRC32C();
      ResponseTee.checksum(viaCopy, whole, from, body.length - from);
      assertThat(viaCopy.getValue()).isEqualTo(expected.getValue());
    }
    ResponseTee tee = tee(info);
    assertThat(tee.start("application/json", null)).isTrue();
    ByteBuf first = read.retainedSlice(11, 40);
    ByteBuf rest = read.retainedSlice(51, body.length - 40);
    tee.feed(first);
    tee.feed(rest);
    tee.finish();
    // The same body from a heap buffer in one piece: the same checksum, so not queued again.
    ResponseTee again = tee(info);
    assertThat(again.start("application/json", null)).isTrue();
    List<ByteBuf> relayed = feed(again, body, body.length);
    again.finish();
    relayed.forEach(ByteBuf::release);
    assertThat(writes).hasSize(1);
    runWrites();
    first.release();
    rest.release();
    whole.release();
    assertThat(read.release()).isTrue(); // the tee kept no reference of its own
    var key = ResponseCacher.ref(info).key("default", "pod-0");
    assertThat(teeCacher.cache().get(key).orElseThrow().body()).isEqualTo(body);
  }

  @Test
  void identicalAnswersOnManyConnectionsAreQueuedOnceAndChangedOnesEachTime() {
    RequestInfoCache requests = new RequestInfoCache();
    List<RequestInfoCache.Connection> connections = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      connections.add(requests.connection());
    }
    String uri = "/api/v1/namespaces/default/pods/pod-0";
    for (int round = 0; round < 4; round++) {
      for (RequestInfoCache.Connection c : connections) {
        answer(c.resolve("GET", uri, "kubelet/v1.30.0"), POD);
      }
    }
    assertThat(writes).hasSize(1);
    runWrites();
    var key = ResponseCacher.ref(get(uri, "kubelet/v1.30.0")).key("default", "pod-0");
    assertThat(teeCacher.cache().get(key).orElseThrow().resourceVersion()).isEqualTo("7");

    // Each changed answer is queued, whichever connection saw it; the last one is what is cached.
    int version = 7;
    for (int round = 0; round < 3; round++) {
      for (RequestInfoCache.Connection c : connections) {
        version++;
        answer(c.resolve("GET", uri, "kubelet/v1.30.0"), POD.replace("\"7\"", "\"" + version + "\""));
      }
    }
    assertThat(writes).hasSize(9);
    runWrites();
    DiskCache.Entry stored = teeCacher.cache().get(key).orElseThrow();
    assertThat(stored.resourceVersion()).isEqualTo(Integer.toString(version));
    assertThat(new String(stored.body(), StandardCharsets.UTF_8))
        .isEqualTo(POD.replace("\"7\"", "\"" + version + "\""));
    // Back to an earlier answer: changed from the last stored one, so queued again.
    answer(connections.get(0).resolve("GET", uri, "kubelet/v1.30.0"), POD);
    assertThat(writes).hasSize(1);
    assertThat(dropped.sum()).isZero();
    runWrites();
  }

  /** A 200 with {@code body} to {@code info}, teed as the exchange would. */
  private void answer(RequestInfo info, String body) {
    ResponseTee tee = tee(info);
    assertThat(tee.start("application/json", null)).isTrue();
    List<ByteBuf> relayed = feed(tee, body.getBytes(StandardCharsets.UTF_8), 64);
    tee.finish();
    relayed.forEach(ByteBuf::release);
  }
}
