package dev.portage.hub.proxy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

class RequestInfoResolverTest {

  // A namespace's own URL carries its name as the namespace too, as in the apiserver.
  @ParameterizedTest(name = "{0} {1}")
  @CsvSource(
      delimiter = '|',
      nullValues = "-",
      textBlock =
          """
          # method | uri                                                        | verb             | group          | version | ns      | resource     | sub      | name
          GET    | /api/v1/pods                                                 | list             | ''             | v1      | ''      | pods         | ''       | ''
          GET    | /api/v1/namespaces/default/pods                              | list             | ''             | v1      | default | pods         | ''       | ''
          GET    | /api/v1/namespaces/default/pods/web-0                        | get              | ''             | v1      | default | pods         | ''       | web-0
          HEAD   | /api/v1/namespaces/default/pods/web-0                        | get              | ''             | v1      | default | pods         | ''       | web-0
          GET    | /api/v1/namespaces/default/pods/web-0/log                    | get              | ''             | v1      | default | pods         | log      | web-0
          PUT    | /api/v1/namespaces/default/pods/web-0/status                 | update           | ''             | v1      | default | pods         | status   | web-0
          PATCH  | /api/v1/nodes/node-1/status                                  | patch            | ''             | v1      | ''      | nodes        | status   | node-1
          GET    | /api/v1/nodes/node-1                                         | get              | ''             | v1      | ''      | nodes        | ''       | node-1
          GET    | /api/v1/nodes                                                | list             | ''             | v1      | ''      | nodes        | ''       | ''
          GET    | /api/v1/pods?watch=true&resourceVersion=5                    | watch            | ''             | v1      | ''      | pods         | ''       | ''
          GET    | /api/v1/pods?watch=1                                         | watch            | ''             | v1      | ''      | pods         | ''       | ''
          GET    | /api/v1/pods?watch=false                                     | list             | ''             | v1      | ''      | pods         | ''       | ''
          GET    | /api/v1/watch/pods                                           | watch            | ''             | v1      | ''      | pods         | ''       | ''
          GET    | /api/v1/watch/namespaces/kube-system/pods/p1                 | watch            | ''             | v1      | kube-system | pods     | ''       | p1
          GET    | /api/v1/namespaces/default/pods?fieldSelector=metadata.name%3Dweb-0 | list      | ''             | v1      | default | pods         | ''       | web-0
          GET    | /api/v1/pods?fieldSelector=spec.nodeName%3Dn1                | list             | ''             | v1      | ''      | pods         | ''       | ''
          GET    | /api/v1/namespaces/default                                   | get              | ''             | v1      | default | namespaces   | ''       | default
          GET    | /api/v1/namespaces                                           | list             | ''             | v1      | ''      | namespaces   | ''       | ''
          PUT    | /api/v1/namespaces/ns1/finalize                              | update           | ''             | v1      | ns1     | namespaces   | finalize | ns1
          GET    | /api/v1/namespaces/ns1/status                                | get              | ''             | v1      | ns1     | namespaces   | status   | ns1
          POST   | /api/v1/namespaces/default/events                            | create           | ''             | v1      | default | events       | ''       | ''
          DELETE | /api/v1/namespaces/default/pods/web-0                        | delete           | ''             | v1      | default | pods         | ''       | web-0
          DELETE | /api/v1/namespaces/default/pods                              | deletecollection | ''             | v1      | default | pods         | ''       | ''
          GET    | /apis/apps/v1/deployments                                    | list             | apps           | v1      | ''      | deployments  | ''       | ''
          GET    | /apis/apps/v1/namespaces/default/deployments/web/scale       | get              | apps           | v1      | default | deployments  | scale    | web
          GET    | /apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1 | get         | coordination.k8s.io | v1 | kube-node-lease | leases | ''     | n1
          GET    | /apis/apps/v1/watch/namespaces/default/deployments           | watch            | apps           | v1      | default | deployments  | ''       | ''
          GET    | /apis/apps/v1/namespaces/default/deployments?watch=true      | watch            | apps           | v1      | default | deployments  | ''       | ''
          GET    | /api/v1/proxy/namespaces/default/pods/web-0                  | proxy            | ''             | v1      | default | pods         | ''       | web-0
          GET    | /api/v1/namespaces/default/pods/web-0/proxy/metrics          | get              | ''             | v1      | default | pods         | proxy    | web-0
          POST   | /apis/authorization.k8s.io/v1/subjectaccessreviews           | create           | authorization.k8s.io | v1 | ''    | subjectaccessreviews | '' | ''
          GET    | /api/v1/namespaces/default/pods/a%2Fb                        | get              | ''             | v1      | default | pods         | ''       | a/b
          GET    | /api/v1/namespaces/default/pods/..                           | get              | ''             | v1      | default | pods         | ''       | ..
          GET    | //api//v1/pods/                                              | list             | ''             | v1      | ''      | pods         | ''       | ''
          """)
  void resolvesResourceRequests(
      String method,
      String uri,
      String verb,
      String group,
      String version,
      String ns,
      String resource,
      String sub,
      String name) {
    RequestInfo info = RequestInfoResolver.resolve(method, uri, "kubelet/v1.30.0 (linux/amd64)");
    assertThat(info.resourceRequest()).isTrue();
    assertThat(info.verb()).isEqualTo(verb);
    assertThat(info.apiGroup()).isEqualTo(group);
    assertThat(info.apiVersion()).isEqualTo(version);
    assertThat(info.namespace()).isEqualTo(ns);
    assertThat(info.resource()).isEqualTo(resource);
    assertThat(info.subresource()).isEqualTo(sub);
    assertThat(info.name()).isEqualTo(name);
    assertThat(info.component()).isEqualTo("kubelet");
  }

  @ParameterizedTest(name = "{0} {1}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          GET  | /healthz          | get  | /healthz
          GET  | /version?timeout=32s | get | /version
          GET  | /api              | get  | /api
          GET  | /api/v1           | get  | /api/v1
          GET  | /apis             | get  | /apis
          GET  | /apis/apps        | get  | /apis/apps
          GET  | /apis/apps/v1     | get  | /apis/apps/v1
          GET  | /                 | get  | /
          POST | /v1/token         | post | /v1/token
          GET  | /openapi/v2       | get  | /openapi/v2
          GET  | /api/v1/watch     | get  | /api/v1/watch
          """)
  void resolvesNonResourceRequests(String method, String uri, String verb, String path) {
    RequestInfo info = RequestInfoResolver.resolve(method, uri, "kubectl/v1.32.4");
    assertThat(info.resourceRequest()).isFalse();
    assertThat(info.verb()).isEqualTo(verb);
    assertThat(info.path()).isEqualTo(path);
    assertThat(info.resource()).isEmpty();
    assertThat(info.component()).isEqualTo("kubectl");
  }

  // The path is "/" and the decoded segments joined by "/", whatever the request line's shape.
  @ParameterizedTest(name = "[{index}] {0} {1}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          GET     | /api/v1/namespaces/default/pods/pod-0      | get     | /api/v1/namespaces/default/pods/pod-0
          GET     | /api/v1/namespaces/default/pods/pod-0?x=1  | get     | /api/v1/namespaces/default/pods/pod-0
          GET     | //api//v1/pods/                            | list    | /api/v1/pods
          GET     | /api/v1/namespaces/default/pods/a%2Fb      | get     | /api/v1/namespaces/default/pods/a/b
          GET     | /api/v1/namespaces/default/pods/a+b        | get     | /api/v1/namespaces/default/pods/a b
          GET     | api/v1/pods                                | list    | /api/v1/pods
          GET     | ''                                         | get     | /
          GET     | ///                                        | get     | /
          OPTIONS | /healthz                                   | options | /healthz
          Get     | /healthz                                   | get     | /healthz
          """)
  void pathIsCanonicalAndMethodLowerCase(String method, String uri, String verb, String path) {
    RequestInfo info = RequestInfoResolver.resolve(method, uri, null);
    assertThat(info.verb()).isEqualTo(verb);
    assertThat(info.path()).isEqualTo(path);
  }

  @ParameterizedTest(name = "[{index}] {0}")
  @CsvSource(
      delimiter = '|',
      nullValues = "NULL",
      textBlock =
          """
          kubelet/v1.30.0 (linux/amd64) kubernetes/abc | kubelet
          kube-proxy/v1.30.0                           | kube-proxy
          coredns                                      | coredns
          fabric8-kubernetes-client/7.8.0              | fabric8-kubernetes-client
          NULL                                         | ''
          ''                                           | ''
          """)
  void componentIsUserAgentUpToFirstSlash(String userAgent, String component) {
    assertThat(RequestInfoResolver.resolve("GET", "/api/v1/pods", userAgent).component())
        .isEqualTo(component);
  }

  @Test
  void fieldSelectorWithUnsafeNameDoesNotNameTheObject() {
    RequestInfo info =
        RequestInfoResolver.resolve(
            "GET", "/api/v1/pods?fieldSelector=metadata.name%3D..", "kubelet");
    assertThat(info.verb()).isEqualTo("list");
    assertThat(info.name()).isEmpty();
  }

  @Test
  void keepsQueryParameters() {
    RequestInfo info =
        RequestInfoResolver.resolve(
            "GET", "/api/v1/pods?watch=true&timeoutSeconds=30&labelSelector=app%3Dweb", "kubelet");
    assertThat(info.isWatch()).isTrue();
    assertThat(info.parameter("timeoutSeconds")).isEqualTo("30");
    assertThat(info.parameter("labelSelector")).isEqualTo("app=web");
    assertThat(info.parameter("missing")).isEmpty();
    assertThat(info.groupVersion()).isEqualTo("v1");
  }

  @Test
  void commonSegmentsAndComponentsAreSharedNotCutFromTheRequest() {
    RequestInfo info = RequestInfoResolver.resolve(
        "GET", "/api/v1/namespaces/kube-system/pods/pod-0", "kubelet/v1.30.0 (linux/amd64)");
    // String literals are interned: the same instance means no new String per request.
    assertThat(info.resource()).isSameAs("pods");
    assertThat(info.namespace()).isSameAs("kube-system");
    assertThat(info.apiVersion()).isSameAs("v1");
    assertThat(info.component()).isSameAs("kubelet");
    assertThat(info.name()).isEqualTo("pod-0");
    assertThat(info.path()).isEqualTo("/api/v1/namespaces/kube-system/pods/pod-0");
  }

  @Test
  void encodedSegmentsAndOddComponentsStillResolveAsBefore() {
    RequestInfo info = RequestInfoResolver.resolve(
        "GET", "/api/v1/namespaces/default/p%6Fds/a+b", "  kube-proxy  /v1");
    assertThat(info.resource()).isEqualTo("pods");
    assertThat(info.name()).isEqualTo("a b"); // decoded as a query component, as before
    assertThat(info.path()).isEqualTo("/api/v1/namespaces/default/pods/a b");
    assertThat(info.component()).isEqualTo("kube-proxy");
    assertThat(RequestInfoResolver.component("custom-agent")).isEqualTo("custom-agent");
    assertThat(RequestInfoResolver.component(" \t")).isEmpty();
    assertThat(RequestInfoResolver.component("/x")).isEmpty();
    assertThat(RequestInfoResolver.resolve("GET", "/api/v1/nodes/podsx", "kubelet").name())
        .isEqualTo("podsx");
  }

  @Test
  void rejectsNullArguments() {
    assertThatThrownBy(() -> RequestInfoResolver.resolve(null, "/", "x"))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("method");
  }
}
