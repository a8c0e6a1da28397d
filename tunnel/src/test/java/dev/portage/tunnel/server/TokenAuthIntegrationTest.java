package dev.portage.tunnel.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.portage.core.testing.MockApiServers;
import dev.portage.tunnel.wire.Metadata;
import io.fabric8.kubernetes.api.model.authentication.TokenReview;
import io.fabric8.kubernetes.api.model.authentication.TokenReviewBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.http.Headers;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.fabric8.mockwebserver.utils.ResponseProvider;
import java.util.Map;
import dev.portage.core.time.FakeClock;
import io.grpc.Status;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Token auth against fabric8's mock Kubernetes API server answering TokenReviews. */
class TokenAuthIntegrationTest {
  private static final String AGENT_USER = "system:serviceaccount:kube-system:konnectivity-agent";
  private final KubernetesMockServer api = new KubernetesMockServer(false);
  private final List<TokenReview> reviews = new CopyOnWriteArrayList<>();
  private final FakeClock clock = new FakeClock();
  private KubernetesClient client;
  private ServerFixture fx;

  @BeforeEach
  void setUp() {
    api.init();
    api.expect().post().withPath("/apis/authentication.k8s.io/v1/tokenreviews")
        .andReply(new ResponseProvider<Object>() {
          // Each request's review, parsed once: the status code and the body are asked for separately.
          private final Map<RecordedRequest, TokenReview> parsed = new java.util.concurrent.ConcurrentHashMap<>();

          private TokenReview review(RecordedRequest request) {
            return parsed.computeIfAbsent(request, r -> {
              TokenReview review = Serialization.unmarshal(r.getBody().readUtf8(), TokenReview.class);
              reviews.add(review);
              return review;
            });
          }

          @Override
          public int getStatusCode(RecordedRequest request) {
            return review(request).getSpec().getToken().equals("flaky-token") ? 500 : 201;
          }

          @Override
          public Object getBody(RecordedRequest request) {
            TokenReview review = review(request);
            TokenReviewBuilder answer = new TokenReviewBuilder(review).withNewStatus()
                .withAudiences(review.getSpec().getAudiences())
                .endStatus();
            return switch (review.getSpec().getToken()) {
              case "agent-token" -> answer.editStatus().withAuthenticated(true)
                  .withNewUser().withUsername(AGENT_USER).endUser().endStatus().build();
              case "flaky-token" -> "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
                  + "\"message\":\"etcdserver: request timed out\",\"code\":500}";
              case "other-token" -> answer.editStatus().withAuthenticated(true)
                  .withNewUser().withUsername("system:serviceaccount:default:intruder").endUser().endStatus().build();
              default -> answer.editStatus().withAuthenticated(false).withError("invalid bearer token").endStatus().build();
            };
          }

          @Override
          public Headers getHeaders() {
            return new Headers.Builder().build();
          }

          @Override
          public void setHeaders(Headers headers) {}
        })
        .always();
    // No retries: the test counts every review the server asks for (fabric8 retries 5xx answers itself).
    try (KubernetesClient mock = api.createClient()) {
      client = new io.fabric8.kubernetes.client.KubernetesClientBuilder().withConfig(
          new io.fabric8.kubernetes.client.ConfigBuilder(mock.getConfiguration())
              .withRequestRetryBackoffLimit(0).build()).build();
    }
    fx = new ServerFixture(b -> b.agentTokenAuth(
        new AgentTokenAuth("kube-system", "konnectivity-agent", "system:konnectivity-server")), clock.timeSource(), client);
  }

  @AfterEach
  void tearDown() throws Exception {
    fx.close();
    client.close();
    MockApiServers.destroy(api);
  }

  private TestStream agent(String... authorization) {
    io.grpc.Metadata md = new io.grpc.Metadata();
    md.put(Metadata.AGENT_ID, "agent-a");
    for (String a : authorization) {
      md.put(Metadata.AUTHORIZATION, a);
    }
    return fx.track(TestStream.agent(fx.agentChannel(), md));
  }

  @Test
  void validServiceAccountTokenIsAdmitted() {
    TestStream agent = agent("Bearer agent-token");
    assertThat(agent.awaitHeaders().get(Metadata.SERVER_ID)).isEqualTo("server-1");
    assertThat(reviews).hasSize(1);
    assertThat(reviews.get(0).getSpec().getAudiences()).containsExactly("system:konnectivity-server");
    assertThat(reviews.get(0).getSpec().getToken()).isEqualTo("agent-token");
  }

  @Test
  void missingTokenIsUnauthenticatedBeforeAnyHeaders() {
    TestStream agent = agent();
    Status s = agent.awaitCloseWithoutPackets();
    assertThat(agent.headers()).isNull();
    assertThat(s.getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
    assertThat(s.getDescription()).isEqualTo("expected exactly one authorization header, got 0");
    assertThat(reviews).isEmpty();
  }

  @Test
  void twoTokensAreUnauthenticated() {
    Status s = agent("Bearer agent-token", "Bearer agent-token").awaitCloseWithoutPackets();
    assertThat(s.getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
    assertThat(s.getDescription()).isEqualTo("expected exactly one authorization header, got 2");
  }

  @Test
  void nonBearerAuthorizationIsUnauthenticated() {
    Status s = agent("Basic YWdlbnQ6cHc=").awaitCloseWithoutPackets();
    assertThat(s.getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
    assertThat(s.getDescription()).startsWith("authorization header is not a bearer token");
  }

  @Test
  void rejectedTokenIsUnauthenticated() {
    TestStream agent = agent("Bearer forged");
    Status s = agent.awaitCloseWithoutPackets();
    assertThat(agent.headers()).isNull();
    assertThat(s.getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
    assertThat(s.getDescription())
        .isEqualTo("agent token was not authenticated for audience system:konnectivity-server: invalid bearer token");
    assertThat(fx.server.ready()).isFalse();
  }

  @Test
  void tokenOfAnotherServiceAccountIsPermissionDenied() {
    Status s = agent("Bearer other-token").awaitCloseWithoutPackets();
    assertThat(s.getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
    assertThat(s.getDescription()).isEqualTo("agent token belongs to system:serviceaccount:default:intruder (expected: "
        + AGENT_USER + ")");
  }

  @Test
  void answersAreKeptForTenSecondsByTokenAdmittedAndRefusedAlike() {
    agent("Bearer agent-token").awaitHeaders();
    agent("Bearer agent-token").awaitHeaders();
    assertThat(agent("Bearer forged").awaitCloseWithoutPackets().getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
    assertThat(agent("Bearer forged").awaitCloseWithoutPackets().getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
    assertThat(reviews).extracting(r -> r.getSpec().getToken()).containsExactly("agent-token", "forged");
    assertThat(fx.metric("konnectivity_network_proxy_server_token_reviews", "outcome", "cached")).isEqualTo(2);

    clock.advance(Duration.ofSeconds(10));
    agent("Bearer agent-token").awaitHeaders();
    assertThat(reviews).extracting(r -> r.getSpec().getToken()).containsExactly("agent-token", "forged", "agent-token");
  }

  @Test
  void apiErrorsAreUnavailableAndNotKept() {
    for (int i = 1; i <= 2; i++) {
      Status s = agent("Bearer flaky-token").awaitCloseWithoutPackets();
      assertThat(s.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
      assertThat(s.getDescription()).startsWith("token review failed: ");
      assertThat(reviews).hasSize(i);
    }
    assertThat(fx.metric("konnectivity_network_proxy_server_token_reviews", "outcome", "error")).isEqualTo(2);
  }
}
