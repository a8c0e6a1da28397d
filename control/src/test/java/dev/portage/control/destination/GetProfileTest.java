package dev.portage.control.destination;

import static dev.portage.control.destination.Kube.put;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Duration;
import dev.portage.api.linkerd.destination.DestinationGrpc;
import dev.portage.api.linkerd.destination.DestinationProfile;
import dev.portage.api.linkerd.destination.GetDestination;
import dev.portage.api.linkerd.destination.RequestMatch;
import dev.portage.api.linkerd.destination.ResponseMatch;
import dev.portage.api.linkerd.destination.Route;
import dev.portage.api.linkerd.destination.WeightedDst;
import dev.portage.api.linkerd.httptypes.HttpMethod;
import dev.portage.control.store.ResourceStore;
import dev.portage.core.time.FakeClock;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The GetProfile side of {@link DestinationServer} over real in-process gRPC. */
class GetProfileTest {

  static final String WEB = "web.default.svc.cluster.local:80";
  static final String FQDN = "web.default.svc.cluster.local";

  static final String PROFILE =
      """
      apiVersion: linkerd.io/v1alpha2
      kind: ServiceProfile
      metadata: {namespace: default, name: web.default.svc.cluster.local}
      spec:
        routes:
        - name: GET /books/{id}
          condition:
            method: GET
            pathRegex: /books/[^/]+
          responseClasses:
          - condition: {status: {min: 500, max: 599}}
            isFailure: true
          isRetryable: true
          timeout: 250ms
        - name: not-admin
          condition:
            not: {pathRegex: /admin/.*}
          timeout: 1m30s
        - name: custom
          condition:
            any:
            - method: PURGE
            - all:
              - method: post
              - pathRegex: ^/upload$
        - name: broken
          condition: {}
        retryBudget:
          retryRatio: 0.5
          minRetriesPerSecond: 3
          ttl: 20s
        dstOverrides:
        - authority: web-v1.default.svc.cluster.local
          weight: 500m
        - authority: web-v2.default.svc.cluster.local:8080
          weight: 1
        - authority: web-v3.default.svc.cluster.local
          weight: 0
      """;

  final ResourceStore store = new ResourceStore();
  final PrometheusRegistry registry = new PrometheusRegistry();
  final FakeClock clock = new FakeClock();
  DestinationServer destinations;
  Server server;
  ManagedChannel channel;
  DestinationGrpc.DestinationStub stub;

  @BeforeEach
  void start() throws Exception {
    destinations = new DestinationServer(DestinationConfig.defaults(), store, clock.timeSource(), registry);
    String name = InProcessServerBuilder.generateName();
    server = InProcessServerBuilder.forName(name).addService(destinations.service()).build().start();
    channel = InProcessChannelBuilder.forName(name).build();
    stub = DestinationGrpc.newStub(channel);
  }

  @AfterEach
  void stop() throws Exception {
    channel.shutdownNow();
    server.shutdownNow();
    destinations.close();
    assertThat(channel.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    assertThat(server.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
  }

  Recorder<DestinationProfile> getProfile(String path, String contextToken) {
    Recorder<DestinationProfile> r = new Recorder<>();
    stub.getProfile(
        GetDestination.newBuilder().setScheme("k8s").setPath(path).setContextToken(contextToken).build(), r);
    return r;
  }

  @Test
  void withoutProfileTheDefaultProfileIsSent() {
    DestinationProfile p = getProfile(WEB, "").next();

    assertThat(p.getFullyQualifiedName()).isEqualTo(FQDN);
    assertThat(p.getRoutesList()).isEmpty();
    assertThat(p.getDstOverridesList()).isEmpty();
    assertThat(p.getOpaqueProtocol()).isFalse();
    assertThat(p.getRetryBudget().getRetryRatio()).isEqualTo(0.2f);
    assertThat(p.getRetryBudget().getMinRetriesPerSecond()).isEqualTo(10);
    assertThat(p.getRetryBudget().getTtl()).isEqualTo(Duration.newBuilder().setSeconds(10).build());
  }

  @Test
  void profileRoutesBudgetAndOverridesAreTranslated() {
    put(store, Kube.service("default", "web"));
    put(store, PROFILE);

    DestinationProfile p = getProfile(WEB, "").next();

    assertThat(p.getFullyQualifiedName()).isEqualTo(FQDN);
    assertThat(p.getRoutesList()).hasSize(3); // "broken" has no matcher and is dropped
    Route books = p.getRoutes(0);
    assertThat(books.getMetricsLabelsMap()).containsEntry("route", "GET /books/{id}");
    assertThat(books.getCondition().getAll().getMatchesList())
        .containsExactly(
            RequestMatch.newBuilder()
                .setPath(dev.portage.api.linkerd.destination.PathMatch.newBuilder().setRegex("^/books/[^/]+$"))
                .build(),
            RequestMatch.newBuilder()
                .setMethod(HttpMethod.newBuilder().setRegistered(HttpMethod.Registered.GET))
                .build());
    assertThat(books.getResponseClassesList()).hasSize(1);
    assertThat(books.getResponseClasses(0).getIsFailure()).isTrue();
    ResponseMatch status = books.getResponseClasses(0).getCondition();
    assertThat(status.getStatus().getMin()).isEqualTo(500);
    assertThat(status.getStatus().getMax()).isEqualTo(599);
    assertThat(books.getIsRetryable()).isTrue();
    assertThat(books.getTimeout()).isEqualTo(Duration.newBuilder().setNanos(250_000_000).build());

    Route notAdmin = p.getRoutes(1);
    assertThat(notAdmin.getCondition().getNot().getPath().getRegex()).isEqualTo("^/admin/.*$");
    assertThat(notAdmin.getTimeout().getSeconds()).isEqualTo(90);
    assertThat(notAdmin.getIsRetryable()).isFalse();

    Route custom = p.getRoutes(2);
    assertThat(custom.hasTimeout()).isFalse();
    RequestMatch.Seq any = custom.getCondition().getAny();
    assertThat(any.getMatches(0).getMethod().getUnregistered()).isEqualTo("PURGE");
    RequestMatch.Seq all = any.getMatches(1).getAll();
    assertThat(all.getMatches(0).getMethod().getRegistered()).isEqualTo(HttpMethod.Registered.POST);
    assertThat(all.getMatches(1).getPath().getRegex()).isEqualTo("^/upload$");

    assertThat(p.getRetryBudget().getRetryRatio()).isEqualTo(0.5f);
    assertThat(p.getRetryBudget().getMinRetriesPerSecond()).isEqualTo(3);
    assertThat(p.getRetryBudget().getTtl().getSeconds()).isEqualTo(20);

    assertThat(p.getDstOverridesList())
        .containsExactly(
            WeightedDst.newBuilder().setAuthority("web-v1.default.svc.cluster.local:80").setWeight(500).build(),
            WeightedDst.newBuilder().setAuthority("web-v2.default.svc.cluster.local:8080").setWeight(1000).build());
    assertThat(p.getProfileRef().getResource().getKind()).isEqualTo("ServiceProfile");
    assertThat(p.getParentRef().getResource().getName()).isEqualTo("web");
    assertThat(Metrics.value(registry, "portage_destination_profile_invalid_entries")).isEqualTo(1);
  }

  @Test
  void invalidEntriesAreCountedOncePerProfileRevisionNotPerTranslation() {
    put(store, Kube.service("default", "web"));
    put(store, PROFILE);
    assertThat(getProfile(WEB, "").next().getRoutesList()).hasSize(3);
    assertThat(getProfile(WEB, "").next().getRoutesList()).hasSize(3); // a second stream: translated again
    assertThat(Metrics.value(registry, "portage_destination_profile_invalid_entries")).isEqualTo(1);

    Recorder<DestinationProfile> r = getProfile(WEB, "");
    r.next();
    put(store, PROFILE.replace("retryRatio: 0.5", "retryRatio: 0.25")); // a new revision, "broken" still in it
    assertThat(r.next().getRetryBudget().getRetryRatio()).isEqualTo(0.25f);
    assertThat(Metrics.value(registry, "portage_destination_profile_invalid_entries")).isEqualTo(2);
  }

  @Test
  void changesResendTheWholeProfileAndDeletionFallsBackToDefault() {
    Recorder<DestinationProfile> r = getProfile(WEB, "");
    assertThat(r.next().getRoutesList()).isEmpty();

    put(store, PROFILE);
    assertThat(r.next().getRoutesList()).hasSize(3);

    put(store, PROFILE.replace("retryRatio: 0.5", "retryRatio: 0.1"));
    DestinationProfile changed = r.next();
    assertThat(changed.getRoutesList()).hasSize(3);
    assertThat(changed.getRetryBudget().getRetryRatio()).isEqualTo(0.1f);

    Kube.delete(store, KubeKinds.SERVICE_PROFILE, "default", FQDN);
    DestinationProfile fallback = r.next();
    assertThat(fallback.getRoutesList()).isEmpty();
    assertThat(fallback.getRetryBudget()).isEqualTo(ProfileTranslator.DEFAULT_RETRY_BUDGET);
    assertThat(fallback.getFullyQualifiedName()).isEqualTo(FQDN);
  }

  @Test
  void profileInTheCallersNamespaceWins() {
    put(store, PROFILE);
    put(
        store,
        """
        apiVersion: linkerd.io/v1alpha2
        kind: ServiceProfile
        metadata: {namespace: client, name: web.default.svc.cluster.local}
        spec:
          routes:
          - name: client-view
            condition: {method: GET}
            timeout: 1s
        """);

    DestinationProfile own = getProfile(WEB, "{\"ns\":\"other\"}").next();
    DestinationProfile clients = getProfile(WEB, "{\"ns\":\"client\",\"nodeName\":\"n1\",\"pod\":\"p\"}").next();

    assertThat(own.getRoutesList()).hasSize(3);
    assertThat(clients.getRoutesList()).extracting(r -> r.getMetricsLabelsMap().get("route")).containsExactly("client-view");
  }

  @Test
  void opaquePortFromServiceAnnotationMeansNoRoutes() {
    put(store, PROFILE);
    put(
        store,
        """
        apiVersion: v1
        kind: Service
        metadata:
          namespace: default
          name: web
          annotations: {config.linkerd.io/opaque-ports: "3306,4000-4100"}
        spec:
          ports:
          - {name: http, port: 80}
          - {name: db, port: 4050}
        """);

    DestinationProfile opaque = getProfile("web.default.svc.cluster.local:4050", "").next();
    DestinationProfile http = getProfile(WEB, "").next();

    assertThat(opaque.getOpaqueProtocol()).isTrue();
    assertThat(opaque.getRoutesList()).isEmpty();
    assertThat(http.getOpaqueProtocol()).isFalse();
    assertThat(http.getRoutesList()).hasSize(3);
  }

  @Test
  void malformedAuthorityIsInvalidArgument() {
    Status s = getProfile("10.1.2.3:80", "").awaitEnd();

    assertThat(s.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(s.getDescription()).contains("IP address");
  }

  @Test
  void cancelledProfileStreamsAreForgotten() {
    Recorder<DestinationProfile> r = getProfile(WEB, "");
    r.next();
    assertThat(Metrics.value(registry, "portage_destination_streams", "rpc", "GetProfile")).isEqualTo(1);

    r.cancel();

    org.awaitility.Awaitility.await()
        .atMost(java.time.Duration.ofSeconds(10))
        .until(() -> destinations.streamCount() == 0);
    assertThat(Metrics.value(registry, "portage_destination_streams", "rpc", "GetProfile")).isZero();
  }
}
