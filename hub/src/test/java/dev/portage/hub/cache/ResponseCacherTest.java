package dev.portage.hub.cache;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.portage.hub.proxy.RequestInfo;
import dev.portage.hub.proxy.RequestInfoResolver;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ResponseCacherTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final ResourceRef PODS = new ResourceRef("kubelet", "pods", "v1", "");

  @TempDir Path dir;
  private DiskCache cache;
  private ResponseCacher cacher;

  @BeforeEach
  void setUp() throws IOException {
    cache = DiskCache.open(dir);
    cacher = new ResponseCacher(cache, JSON);
  }

  private static RequestInfo req(String method, String uri) {
    return RequestInfoResolver.resolve(method, uri, "kubelet/v1.30");
  }

  private static byte[] b(String s) {
    return s.replace('\'', '"').getBytes(StandardCharsets.UTF_8);
  }

  private static String pod(String ns, String name, int rv) {
    return "{'metadata':{'name':'" + name + "','namespace':'" + ns + "','resourceVersion':'" + rv
        + "'},'spec':{}}";
  }

  @Test
  void listIsStoredObjectByObjectWithKindApiVersionAndListResourceVersion() throws IOException {
    int stored = cacher.cacheList(req("GET", "/api/v1/pods"),
        b("{'kind':'PodList','apiVersion':'v1','metadata':{'resourceVersion':'30'},'items':["
            + pod("a", "p1", 10) + "," + pod("b", "p2", 20) + "]}"));

    assertThat(stored).isEqualTo(2);
    JsonNode p1 = JSON.readTree(cache.get(PODS.key("a", "p1")).orElseThrow().body());
    assertThat(p1.path("kind").asText()).isEqualTo("Pod");
    assertThat(p1.path("apiVersion").asText()).isEqualTo("v1");
    assertThat(cache.listMeta(PODS)).contains(new DiskCache.ListMeta("PodList", "v1", "30"));
  }

  @Test
  void listItemsAreStoredAsTheirOwnBytesWithNestedObjectsStringsAndEscapesIntact()
      throws IOException {
    String tricky = "{'metadata':{'name':'p3','namespace':'a','resourceVersion':'5',"
        + "'annotations':{'x':'}{\\\\\\'[','metadata':'{\\'name\\':\\'no\\'}'}},"
        + "'spec':{'containers':[{'name':'c','args':['a','}']}]},'status':null}";
    int stored = cacher.cacheList(req("GET", "/api/v1/namespaces/a/pods"),
        b("{'kind':'PodList','apiVersion':'v1','metadata':{'resourceVersion':'9'},'items':["
            + tricky + ", {'kind':'Pod','apiVersion':'v1','metadata':{'name':'p4',"
            + "'namespace':'a','resourceVersion':'6'}}]}"));

    assertThat(stored).isEqualTo(2);
    JsonNode p3 = JSON.readTree(cache.get(PODS.key("a", "p3")).orElseThrow().body());
    JsonNode expected = JSON.readTree(b(tricky));
    ((com.fasterxml.jackson.databind.node.ObjectNode) expected).put("kind", "Pod")
        .put("apiVersion", "v1");
    assertThat(p3).isEqualTo(expected);
    assertThat(cache.get(PODS.key("a", "p4")).orElseThrow().resourceVersion()).isEqualTo("6");
  }

  @Test
  void aCompleteListAtTheResourceVersionAlreadyAppliedIsNotAppliedAgain() throws IOException {
    byte[] list = b("{'kind':'PodList','apiVersion':'v1','metadata':{'resourceVersion':'30'},"
        + "'items':[" + pod("a", "p1", 10) + "]}");
    RequestInfo all = req("GET", "/api/v1/pods");
    assertThat(cacher.cacheList(all, list)).isEqualTo(1);
    long generation = cache.generation();
    // A watch deleted p1 after the list; the same snapshot again must not bring it back.
    assertThat(cache.delete(PODS.key("a", "p1"))).isTrue();
    assertThat(cacher.cacheList(all, list)).isEqualTo(1);
    assertThat(cache.get(PODS.key("a", "p1"))).isEmpty();
    assertThat(cache.generation()).isEqualTo(generation + 1);
    // A newer list is applied.
    cacher.cacheList(all, b("{'kind':'PodList','apiVersion':'v1','metadata':"
        + "{'resourceVersion':'31'},'items':[" + pod("a", "p1", 10) + "]}"));
    assertThat(cache.get(PODS.key("a", "p1"))).isPresent();
  }

  @Test
  void aListWhoseBodyIsNotAJsonObjectIsNotCached() {
    assertThat(cacher.cacheList(req("GET", "/api/v1/pods"), b("[1,2]"))).isEqualTo(-1);
    assertThat(cacher.cacheList(req("GET", "/api/v1/pods"), b("{'kind':'PodList','items':"))).isEqualTo(-1);
    assertThat(cacher.cacheList(req("GET", "/api/v1/pods"), b("{'kind':'Pod','items':[]}")))
        .isEqualTo(-1);
    assertThat(cache.list(PODS, "")).isEmpty();
  }

  @Test
  void completeListRemovesObjectsItNoLongerHasButSelectedListDoesNot() {
    cacher.cacheList(req("GET", "/api/v1/pods"),
        b("{'kind':'PodList','apiVersion':'v1','metadata':{'resourceVersion':'30'},'items':["
            + pod("a", "p1", 10) + "," + pod("b", "p2", 20) + "]}"));
    cacher.cacheList(req("GET", "/api/v1/pods?labelSelector=app%3Dx"),
        b("{'kind':'PodList','apiVersion':'v1','metadata':{'resourceVersion':'31'},'items':[]}"));
    assertThat(cache.list(PODS, "")).hasSize(2);

    cacher.cacheList(req("GET", "/api/v1/pods"),
        b("{'kind':'PodList','apiVersion':'v1','metadata':{'resourceVersion':'40'},'items':["
            + pod("b", "p2", 20) + "]}"));
    assertThat(cache.list(PODS, "")).extracting(e -> e.key().name()).containsExactly("p2");
  }

  @Test
  void watchEventsAddModifyAndDelete() {
    RequestInfo watch = req("GET", "/api/v1/namespaces/a/pods?watch=true");
    assertThat(cacher.applyWatchEvent(watch, b("{'type':'ADDED','object':{'kind':'Pod','apiVersion':'v1',"
        + pod("a", "p1", 5).substring(1) + "}"))).isTrue();
    assertThat(cacher.applyWatchEvent(watch, b("{'type':'MODIFIED','object':{'kind':'Pod','apiVersion':'v1',"
        + pod("a", "p1", 6).substring(1) + "}"))).isTrue();
    assertThat(cache.get(PODS.key("a", "p1")).orElseThrow().resourceVersion()).isEqualTo("6");
    // A late, older event does not win.
    assertThat(cacher.applyWatchEvent(watch, b("{'type':'MODIFIED','object':{'kind':'Pod','apiVersion':'v1',"
        + pod("a", "p1", 4).substring(1) + "}"))).isFalse();
    assertThat(cacher.applyWatchEvent(watch, b("{'type':'BOOKMARK','object':{'kind':'Pod','apiVersion':'v1','metadata':{'resourceVersion':'9'}}}"))).isFalse();
    assertThat(cacher.applyWatchEvent(watch, b("{'type':'DELETED','object':{'kind':'Pod','apiVersion':'v1',"
        + pod("a", "p1", 7).substring(1) + "}"))).isTrue();
    assertThat(cache.get(PODS.key("a", "p1"))).isEmpty();
  }

  @Test
  void statusTablesAndGarbageAreNotCached() {
    assertThat(cacher.cacheObject(req("GET", "/api/v1/namespaces/a/pods/x"),
        b("{'kind':'Status','apiVersion':'v1','metadata':{},'status':'Failure','code':404}"))).isFalse();
    assertThat(cacher.cacheList(req("GET", "/api/v1/pods"),
        b("{'kind':'Table','apiVersion':'meta.k8s.io/v1','rows':[]}"))).isEqualTo(-1);
    assertThat(cacher.cacheObject(req("GET", "/api/v1/namespaces/a/pods/x"), b("\u0000k8s protobuf"))).isFalse();
    assertThat(cacher.cacheObject(req("GET", "/api/v1/namespaces/a/pods/x"), b("[1,2]"))).isFalse();
    assertThat(cache.components()).isEmpty();
  }

  @Test
  void splitterFindsObjectsAcrossAnyChunkBoundaries() {
    String stream = "{'type':'ADDED','object':{'s':'a } { \\\\' \\' ]'}}\n{'type':'DELETED','object':{'a':[1,{}]}}\n  "
        .replace('\'', '"');
    byte[] bytes = stream.getBytes(StandardCharsets.UTF_8);
    for (int chunk = 1; chunk <= bytes.length; chunk++) {
      List<String> out = new ArrayList<>();
      JsonObjectSplitter splitter = new JsonObjectSplitter(1024, o -> out.add(new String(o, StandardCharsets.UTF_8)));
      for (int i = 0; i < bytes.length; i += chunk) {
        ByteBuf buf = Unpooled.wrappedBuffer(bytes, i, Math.min(chunk, bytes.length - i));
        splitter.feed(buf);
        buf.release();
      }
      assertThat(out).hasSize(2);
      assertThat(out.get(1)).isEqualTo("{\"type\":\"DELETED\",\"object\":{\"a\":[1,{}]}}");
    }
  }

  @Test
  void splitterDropsOversizedObjectsAndKeepsGoing() {
    List<byte[]> out = new ArrayList<>();
    JsonObjectSplitter splitter = new JsonObjectSplitter(16, out::add);
    splitter.feed(b("{'a':'0123456789012345678901234'}{'b':1}"));
    assertThat(out).extracting(o -> new String(o, StandardCharsets.UTF_8)).containsExactly("{\"b\":1}");
  }

  @Test
  void policyFollowsYurtHubRules() {
    CachePolicy policy = new CachePolicy(CachePolicy.DEFAULT_COMPONENTS);
    assertThat(policy.isCacheable(req("GET", "/api/v1/pods"))).isTrue();
    assertThat(policy.isCacheable(req("GET", "/api/v1/namespaces/a/pods/x/status"))).isTrue();
    assertThat(policy.isCacheable(req("GET", "/api/v1/namespaces/a/pods/x/log"))).isFalse();
    assertThat(policy.isCacheable(req("DELETE", "/api/v1/namespaces/a/pods/x"))).isFalse();
    assertThat(policy.isCacheable(req("GET", "/version"))).isFalse();
    assertThat(policy.isCacheable(req("POST", "/apis/certificates.k8s.io/v1/certificatesigningrequests"))).isFalse();
    assertThat(policy.isCacheable(RequestInfoResolver.resolve("GET", "/api/v1/pods", "kubectl/1"))).isFalse();
    assertThat(new CachePolicy(Set.of("*")).isCacheable(RequestInfoResolver.resolve("GET", "/api/v1/pods", "kubectl/1"))).isTrue();
    assertThat(new CachePolicy(Set.of("*")).isCacheable(RequestInfoResolver.resolve("GET", "/api/v1/pods", null))).isFalse();
  }
}
