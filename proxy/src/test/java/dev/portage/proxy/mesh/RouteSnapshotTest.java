package dev.portage.proxy.mesh;

import static org.assertj.core.api.Assertions.assertThat;

import dev.portage.api.linkerd.destination.DestinationProfile;
import dev.portage.api.linkerd.destination.HttpStatusRange;
import dev.portage.api.linkerd.destination.PathMatch;
import dev.portage.api.linkerd.destination.RequestMatch;
import dev.portage.api.linkerd.destination.ResponseClass;
import dev.portage.api.linkerd.destination.ResponseMatch;
import dev.portage.api.linkerd.destination.Route;
import dev.portage.api.linkerd.httptypes.HttpMethod;
import dev.portage.core.time.FakeClock;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpVersion;
import org.junit.jupiter.api.Test;

class RouteSnapshotTest {

  static RequestMatch path(String regex) {
    return RequestMatch.newBuilder().setPath(PathMatch.newBuilder().setRegex(regex)).build();
  }

  static RequestMatch method(HttpMethod.Registered m) {
    return RequestMatch.newBuilder().setMethod(HttpMethod.newBuilder().setRegistered(m)).build();
  }

  static HttpRequest req(String method, String uri) {
    return new DefaultHttpRequest(HttpVersion.HTTP_1_1, io.netty.handler.codec.http.HttpMethod.valueOf(method), uri);
  }

  static Route route(String name, RequestMatch m) {
    return Route.newBuilder().setCondition(m).putMetricsLabels("route", name).build();
  }

  @Test
  void firstMatchingRouteWinsWithAllAnyAndNot() {
    RequestMatch getBooks = RequestMatch.newBuilder().setAll(RequestMatch.Seq.newBuilder()
        .addMatches(method(HttpMethod.Registered.GET)).addMatches(path("^/books/[0-9]+$"))).build();
    RequestMatch notGet = RequestMatch.newBuilder().setNot(method(HttpMethod.Registered.GET)).build();
    RequestMatch anyAdmin = RequestMatch.newBuilder().setAny(RequestMatch.Seq.newBuilder()
        .addMatches(path("^/admin$")).addMatches(path("^/books/.*$"))).build();
    DestinationProfile p = DestinationProfile.newBuilder()
        .addRoutes(route("get-book", getBooks))
        .addRoutes(route("writes", notGet))
        .addRoutes(route("admin-or-books", anyAdmin))
        .build();
    ProfileSnapshot s = ProfileSnapshot.of(p, new FakeClock());

    assertThat(s.route(req("GET", "/books/12?x=1")).name()).isEqualTo("get-book");
    assertThat(s.route(req("POST", "/books/12")).name()).isEqualTo("writes");
    assertThat(s.route(req("GET", "/books/abc")).name()).isEqualTo("admin-or-books");
    assertThat(s.route(req("GET", "/admin")).name()).isEqualTo("admin-or-books");
    // Anchored: a longer path does not match.
    assertThat(s.route(req("GET", "/admin/x")).name()).isEqualTo("default");
  }

  @Test
  void responseClassesDecideFailureFirstMatchWinsAndUnmatchedIsSuccess() {
    ResponseMatch fiveXx = ResponseMatch.newBuilder().setStatus(HttpStatusRange.newBuilder().setMin(500).setMax(599)).build();
    ResponseMatch is503 = ResponseMatch.newBuilder().setStatus(HttpStatusRange.newBuilder().setMin(503).setMax(503)).build();
    Route r = route("r", path("^/$")).toBuilder()
        .addResponseClasses(ResponseClass.newBuilder().setCondition(is503).setIsFailure(false))
        .addResponseClasses(ResponseClass.newBuilder().setCondition(fiveXx).setIsFailure(true))
        .build();
    RouteSnapshot s = RouteSnapshot.of(r, true);

    assertThat(s.isFailure(500)).isTrue();
    assertThat(s.isFailure(503)).isFalse();
    assertThat(s.isFailure(404)).isFalse();
    assertThat(RouteSnapshot.DEFAULT.isFailure(502)).isTrue();
    assertThat(RouteSnapshot.DEFAULT.isFailure(404)).isFalse();
  }

  @Test
  void invalidBudgetMakesRetryableRoutesNonRetryableAndZeroWeightSplitsAreDropped() {
    DestinationProfile p = DestinationProfile.newBuilder()
        .addRoutes(route("r", path("^/$")).toBuilder().setIsRetryable(true))
        .setRetryBudget(dev.portage.api.linkerd.destination.RetryBudget.newBuilder()
            .setRetryRatio(0.2f).setTtl(com.google.protobuf.Duration.newBuilder().setSeconds(0)))
        .addDstOverrides(dev.portage.api.linkerd.destination.WeightedDst.newBuilder().setAuthority("a:80").setWeight(0))
        .addDstOverrides(dev.portage.api.linkerd.destination.WeightedDst.newBuilder().setAuthority("b:80").setWeight(5))
        .build();
    ProfileSnapshot s = ProfileSnapshot.of(p, new FakeClock());

    assertThat(s.budget()).isNull();
    assertThat(s.routes().get(0).retryable()).isFalse();
    assertThat(s.overrides()).extracting(d -> d.getAuthority()).containsExactly("b:80");
  }
}
