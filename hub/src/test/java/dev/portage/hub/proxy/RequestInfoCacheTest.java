package dev.portage.hub.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Requests resolved once per distinct request, per connection and hub-wide. */
class RequestInfoCacheTest {

  private static final String POD = "/api/v1/namespaces/default/pods/pod-0";
  private static final String KUBELET = "kubelet/v1.30.0 (linux/amd64)";

  private final RequestInfoCache cache = new RequestInfoCache();

  @Test
  void resolvesAsTheResolverDoes() {
    RequestInfoCache.Connection c = cache.connection();
    for (String uri : new String[] {POD, "/api/v1/pods?watch=true&resourceVersion=5", "/apis",
        "/api/v1/namespaces/default/pods?fieldSelector=metadata.name%3Dweb-0", "/healthz"}) {
      for (String method : new String[] {"GET", "DELETE", "POST"}) {
        assertThat(c.resolve(method, uri, KUBELET))
            .isEqualTo(RequestInfoResolver.resolve(method, uri, KUBELET));
      }
    }
    assertThat(c.resolve("GET", POD, null)).isEqualTo(RequestInfoResolver.resolve("GET", POD, null));
  }

  @Test
  void aRepeatedRequestGetsTheSameInstanceOnEveryConnection() {
    RequestInfoCache.Connection a = cache.connection();
    RequestInfoCache.Connection b = cache.connection();
    RequestInfo first = a.resolve("GET", POD, KUBELET);
    // Equal strings that are not the same objects, as another decoder would hand them.
    assertThat(a.resolve(new String("GET"), new String(POD), new String(KUBELET))).isSameAs(first);
    assertThat(b.resolve("GET", POD, KUBELET)).isSameAs(first);
    // Another request in between does not lose the shared one.
    assertThat(a.resolve("GET", "/api/v1/nodes/n1", KUBELET).name()).isEqualTo("n1");
    assertThat(a.resolve("GET", POD, KUBELET)).isSameAs(first);
    // A User-Agent of the same component resolves to an equal request: shared as well.
    assertThat(b.resolve("GET", POD, "kubelet/v1.31.0")).isSameAs(first);
    assertThat(cache.size()).isEqualTo(2);
  }

  @Test
  void differentRequestsStayApart() {
    RequestInfoCache.Connection c = cache.connection();
    RequestInfo get = c.resolve("GET", POD, KUBELET);
    assertThat(c.resolve("DELETE", POD, KUBELET).verb()).isEqualTo("delete");
    assertThat(c.resolve("GET", POD, "kube-proxy/v1.30.0").component()).isEqualTo("kube-proxy");
    assertThat(c.resolve("GET", POD, null).component()).isEmpty();
    assertThat(c.resolve("GET", POD + "?resourceVersion=0", KUBELET).parameter("resourceVersion"))
        .isEqualTo("0");
    assertThat(c.resolve("GET", POD, KUBELET)).isSameAs(get);
    assertThat(cache.size()).isEqualTo(5);
  }

  @Test
  void theSharedTableIsBounded() {
    RequestInfoCache.Connection c = cache.connection();
    for (int i = 0; i < RequestInfoCache.MAX_SHARED * 2 + 10; i++) {
      String uri = "/api/v1/namespaces/default/pods/pod-" + i;
      assertThat(c.resolve("GET", uri, KUBELET).name()).isEqualTo("pod-" + i);
      assertThat(cache.size()).isBetween(1, RequestInfoCache.MAX_SHARED);
    }
  }
}
