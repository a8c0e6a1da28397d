package dev.portage.hub.local;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.portage.core.time.FakeClock;
import dev.portage.hub.cache.CachePolicy;
import dev.portage.hub.cache.DiskCache;
import dev.portage.hub.cache.ResponseCacher;
import dev.portage.hub.codec.KubeCodec;
import dev.portage.hub.codec.KubeTypes;
import dev.portage.hub.proxy.RequestInfoResolver;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.LastHttpContent;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LocalProxyTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;
  private final FakeClock clock = new FakeClock();
  private final AtomicBoolean cloudHealthy = new AtomicBoolean();
  private DiskCache cache;
  private ResponseCacher cacher;
  private LocalProxy local;
  private EmbeddedChannel channel;

  @BeforeEach
  void setUp() throws IOException {
    cache = DiskCache.open(dir);
    cacher = new ResponseCacher(cache, JSON);
    local = new LocalProxy(cacher, new CachePolicy(CachePolicy.DEFAULT_COMPONENTS), JSON,
        new KubeCodec(JSON, KubeTypes.standard()), clock.timeSource(), cloudHealthy::get, Duration.ofSeconds(1800), new Random(1), Runnable::run);
    channel = new EmbeddedChannel();
    cacher.cacheList(RequestInfoResolver.resolve("GET", "/api/v1/pods", "kubelet/1"), b(
        "{'kind':'PodList','apiVersion':'v1','metadata':{'resourceVersion':'50'},'items':["
            + pod("default", "web-0", "web", "n1", 10) + "," + pod("default", "web-1", "web", "n2", 11) + ","
            + pod("kube-system", "dns", "dns", "n1", 12) + "]}"));
  }

  @AfterEach
  void tearDown() {
    assertThat(channel.finishAndReleaseAll()).isFalse();
  }

  private static byte[] b(String s) {
    return s.replace('\'', '"').getBytes(StandardCharsets.UTF_8);
  }

  private static String pod(String ns, String name, String app, String node, int rv) {
    return "{'metadata':{'name':'" + name + "','namespace':'" + ns + "','resourceVersion':'" + rv
        + "','labels':{'app':'" + app + "','tier':'t" + rv + "'}},'spec':{'nodeName':'" + node + "'}}";
  }

  private FullHttpResponse serve(String method, String uri, String agent, String body) {
    local.serve(RequestInfoResolver.resolve(method, uri, agent), b(body), channel, true,
        LocalProxy.Reason.NO_HEALTHY_UPSTREAM);
    channel.runPendingTasks();
    return channel.readOutbound();
  }

  private static JsonNode body(FullHttpResponse r) throws IOException {
    try {
      return JSON.readTree(r.content().toString(StandardCharsets.UTF_8));
    } finally {
      r.release();
    }
  }

  @Test
  void listsFromTheCacheAsAKubernetesList() throws IOException {
    FullHttpResponse r = serve("GET", "/api/v1/pods", "kubelet/v1.30", "");
    assertThat(r.status().code()).isEqualTo(200);
    JsonNode list = body(r);
    assertThat(list.path("kind").asText()).isEqualTo("PodList");
    assertThat(list.path("apiVersion").asText()).isEqualTo("v1");
    assertThat(list.path("metadata").path("resourceVersion").asText()).isEqualTo("50");
    assertThat(list.path("items")).extracting(i -> i.path("metadata").path("name").asText())
        .containsExactly("web-0", "web-1", "dns");
    assertThat(list.path("items").get(0).path("kind").asText()).isEqualTo("Pod");
    assertThat(local.servedFromCache()).isEqualTo(1);
  }

  @Test
  void aRepeatedListIsAnsweredFromTheEncodedBytesUntilTheCacheChanges() throws IOException {
    // A file changed behind the cache's back is not seen while the memo holds...
    FullHttpResponse first = serve("GET", "/api/v1/namespaces/default/pods", "kubelet/v1.30", "");
    byte[] firstBytes = io.netty.buffer.ByteBufUtil.getBytes(first.content());
    first.release();
    java.nio.file.Files.delete(dir.resolve("kubelet/pods/default/web-1"));
    FullHttpResponse again = serve("GET", "/api/v1/namespaces/default/pods", "kubelet/v1.30", "");
    assertThat(io.netty.buffer.ByteBufUtil.getBytes(again.content())).isEqualTo(firstBytes);
    again.release();
    // ...and any write through the cache retires it.
    cacher.cacheObject(RequestInfoResolver.resolve("GET", "/api/v1/namespaces/default/pods/web-2",
        "kubelet/1"), b(pod("default", "web-2", "web", "n1", 60).replace("{'metadata'",
        "{'kind':'Pod','apiVersion':'v1','metadata'")));
    JsonNode fresh = body(serve("GET", "/api/v1/namespaces/default/pods", "kubelet/v1.30", ""));
    assertThat(fresh.path("items")).extracting(i -> i.path("metadata").path("name").asText())
        .containsExactly("web-0", "web-2");
    assertThat(local.servedFromCache()).isEqualTo(3);
  }

  @Test
  void appliesNamespaceAndSelectors() throws IOException {
    assertThat(names(serve("GET", "/api/v1/namespaces/default/pods", "kubelet", ""))).containsExactly("web-0", "web-1");
    assertThat(names(serve("GET", "/api/v1/pods?labelSelector=app%3Dweb,tier!%3Dt10", "kubelet", ""))).containsExactly("web-1");
    assertThat(names(serve("GET", "/api/v1/pods?labelSelector=app%20in%20(dns,other)", "kubelet", ""))).containsExactly("dns");
    assertThat(names(serve("GET", "/api/v1/pods?labelSelector=app%20notin%20(web),tier", "kubelet", ""))).containsExactly("dns");
    assertThat(names(serve("GET", "/api/v1/pods?labelSelector=!app", "kube-proxy", ""))).isNull();
    assertThat(names(serve("GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dn1", "kubelet", ""))).containsExactly("web-0", "dns");
    assertThat(names(serve("GET", "/api/v1/pods?fieldSelector=metadata.namespace!%3Ddefault", "kubelet", ""))).containsExactly("dns");
    assertThat(names(serve("GET", "/api/v1/pods?fieldSelector=metadata.name%3Dweb-1", "kubelet", ""))).containsExactly("web-1");
  }

  private java.util.List<String> names(FullHttpResponse r) throws IOException {
    int code = r.status().code();
    JsonNode n = body(r);
    if (code != 200) {
      return null;
    }
    java.util.List<String> out = new java.util.ArrayList<>();
    n.path("items").forEach(i -> out.add(i.path("metadata").path("name").asText()));
    return out;
  }

  @Test
  void getsOneObjectOrNotFound() throws IOException {
    FullHttpResponse r = serve("GET", "/api/v1/namespaces/default/pods/web-1", "kubelet", "");
    assertThat(r.status().code()).isEqualTo(200);
    assertThat(body(r).path("spec").path("nodeName").asText()).isEqualTo("n2");
    FullHttpResponse status = serve("GET", "/api/v1/namespaces/default/pods/web-1/status", "kubelet", "");
    assertThat(status.status().code()).isEqualTo(200);
    status.release();
    FullHttpResponse missing = serve("GET", "/api/v1/namespaces/default/pods/nope", "kubelet", "");
    assertThat(missing.status().code()).isEqualTo(404);
    JsonNode st = body(missing);
    assertThat(st.path("kind").asText()).isEqualTo("Status");
    assertThat(st.path("reason").asText()).isEqualTo("NotFound");
    assertThat(st.path("code").asInt()).isEqualTo(404);
  }

  @Test
  void kubeletNeverGetsAnEmptyPodList() throws IOException {
    FullHttpResponse r = serve("GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dn9", "kubelet", "");
    assertThat(r.status().code()).isEqualTo(503);
    assertThat(body(r).path("message").asText()).contains("no pods cached for kubelet");
    // The same empty answer for another component is a valid empty list.
    cacher.cacheList(RequestInfoResolver.resolve("GET", "/api/v1/pods", "kube-proxy/1"),
        b("{'kind':'PodList','apiVersion':'v1','metadata':{'resourceVersion':'5'},'items':[]}"));
    FullHttpResponse empty = serve("GET", "/api/v1/pods", "kube-proxy/1", "");
    assertThat(empty.status().code()).isEqualTo(200);
    assertThat(body(empty).path("items")).isEmpty();
  }

  @Test
  void corruptCacheFilesAreNotServed() throws IOException {
    Path file = dir.resolve("kubelet/pods/default/web-0");
    byte[] bytes = Files.readAllBytes(file);
    Files.write(file, java.util.Arrays.copyOf(bytes, bytes.length / 2));
    assertThat(names(serve("GET", "/api/v1/pods", "kubelet", ""))).containsExactly("web-1", "dns");
    FullHttpResponse r = serve("GET", "/api/v1/namespaces/default/pods/web-0", "kubelet", "");
    assertThat(r.status().code()).isEqualTo(404);
    r.release();
    assertThat(cache.corruptFiles()).isEqualTo(2);
  }

  @Test
  void badSelectorsAreABadRequest() throws IOException {
    FullHttpResponse r = serve("GET", "/api/v1/pods?labelSelector=app%20in%20web", "kubelet", "");
    assertThat(r.status().code()).isEqualTo(400);
    assertThat(body(r).path("message").asText()).contains("labelSelector: malformed term");
    FullHttpResponse f = serve("GET", "/api/v1/pods?fieldSelector=spec.nodeName", "kubelet", "");
    assertThat(f.status().code()).isEqualTo(400);
    assertThat(body(f).path("message").asText()).contains("fieldSelector: malformed term");
  }

  @Test
  void eventsAreStoredAndEchoedWith201() throws IOException {
    String event = "{'kind':'Event','apiVersion':'v1','metadata':{'name':'e1','namespace':'default'},'reason':'Started'}";
    FullHttpResponse r = serve("POST", "/api/v1/namespaces/default/events", "kubelet", event);
    assertThat(r.status().code()).isEqualTo(201);
    assertThat(body(r).path("reason").asText()).isEqualTo("Started");
    assertThat(cache.get(new dev.portage.hub.cache.CacheKey("kubelet", "events", "v1", "", "default", "e1"))).isPresent();
    FullHttpResponse bad = serve("POST", "/api/v1/namespaces/default/events", "kubelet", "{not json");
    assertThat(bad.status().code()).isEqualTo(400);
    bad.release();
  }

  @Test
  void deleteIsForbiddenAndOtherWritesUnavailable() throws IOException {
    FullHttpResponse d = serve("DELETE", "/api/v1/namespaces/default/pods/web-0", "kubelet", "");
    assertThat(d.status().code()).isEqualTo(403);
    assertThat(body(d).path("reason").asText()).isEqualTo("Forbidden");
    FullHttpResponse u = serve("PUT", "/api/v1/namespaces/default/pods/web-0", "kubelet", "{}");
    assertThat(u.status().code()).isEqualTo(503);
    assertThat(body(u).path("message").asText()).contains("update pods cannot be served from the cache");
    FullHttpResponse v = serve("GET", "/version", "kubelet", "");
    assertThat(v.status().code()).isEqualTo(503);
    v.release();
    FullHttpResponse uncached = serve("GET", "/api/v1/pods", "curl/8", "");
    assertThat(uncached.status().code()).isEqualTo(503);
    assertThat(body(uncached).path("message").asText()).contains("--cache-agents");

    local.serve(RequestInfoResolver.resolve("PATCH", "/api/v1/nodes/n1/status", "kubelet"), b("{}"),
        channel, true, LocalProxy.Reason.UPSTREAM_FAILED);
    FullHttpResponse p = channel.readOutbound();
    assertThat(p.status().code()).isEqualTo(502);
    p.release();
  }

  @Test
  void watchIsHeldOpenUntilTimeoutSeconds() {
    local.serve(RequestInfoResolver.resolve("GET", "/api/v1/pods?watch=true&timeoutSeconds=30", "kubelet"),
        new byte[0], channel, true, LocalProxy.Reason.NO_HEALTHY_UPSTREAM);
    HttpResponse head = channel.readOutbound();
    assertThat(head.status().code()).isEqualTo(200);
    assertThat(HttpUtil.isTransferEncodingChunked(head)).isTrue();
    assertThat(head.headers().get(HttpHeaderNames.CONTENT_TYPE)).isEqualTo("application/json");
    assertThat(local.heldWatches()).isEqualTo(1);

    clock.advance(Duration.ofSeconds(29));
    assertThat((Object) channel.readOutbound()).isNull();
    clock.advance(Duration.ofSeconds(1));
    assertThat((Object) channel.readOutbound()).isSameAs(LastHttpContent.EMPTY_LAST_CONTENT);
    assertThat(local.heldWatches()).isZero();
    assertThat(clock.pendingTasks()).isZero();
  }

  @Test
  void watchEndsWithinTwoSecondsOfTheCloudComingBack() {
    local.serve(RequestInfoResolver.resolve("GET", "/api/v1/watch/pods", "kubelet"),
        new byte[0], channel, true, LocalProxy.Reason.NO_HEALTHY_UPSTREAM);
    channel.readOutbound();
    clock.advance(Duration.ofSeconds(10));
    assertThat((Object) channel.readOutbound()).isNull();
    cloudHealthy.set(true);
    clock.advance(Duration.ofSeconds(2));
    assertThat((Object) channel.readOutbound()).isSameAs(LastHttpContent.EMPTY_LAST_CONTENT);
    assertThat(clock.pendingTasks()).isZero();
  }

  @Test
  void watchWithoutTimeoutEndsBetweenOneAndTwoMinRequestTimeouts() {
    local.serve(RequestInfoResolver.resolve("GET", "/api/v1/pods?watch=1", "kubelet"),
        new byte[0], channel, true, LocalProxy.Reason.NO_HEALTHY_UPSTREAM);
    channel.readOutbound();
    clock.advance(Duration.ofSeconds(1800).minusMillis(1));
    assertThat(local.heldWatches()).isEqualTo(1);
    clock.advance(Duration.ofSeconds(1800));
    assertThat(local.heldWatches()).isZero();
    assertThat((Object) channel.readOutbound()).isSameAs(LastHttpContent.EMPTY_LAST_CONTENT);
  }

  @Test
  void heldWatchesAreForgottenWhenTheClientLeaves() {
    for (int i = 0; i < 3; i++) {
      local.serve(RequestInfoResolver.resolve("GET", "/api/v1/pods?watch=1", "kubelet"),
          new byte[0], channel, true, LocalProxy.Reason.NO_HEALTHY_UPSTREAM);
      channel.readOutbound();
    }
    assertThat(local.heldWatches()).isEqualTo(3);
    channel.close();
    assertThat(local.heldWatches()).isZero();
    assertThat(clock.pendingTasks()).isZero();
  }

  @Test
  void rejectsANonPositiveMinRequestTimeout() {
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> new LocalProxy(cacher,
            new CachePolicy(Set.of()), JSON, new KubeCodec(JSON, KubeTypes.standard()),
            clock.timeSource(), () -> true, Duration.ZERO,
            new Random(), Runnable::run))
        .hasMessage("minRequestTimeout: PT0S (expected: > 0)");
  }
}
