package dev.portage.tunnel.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.portage.tunnel.wire.Metadata;
import io.fabric8.kubernetes.api.model.authentication.TokenReview;
import io.fabric8.kubernetes.api.model.authentication.TokenReviewBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.grpc.Status;
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
  private KubernetesClient client;
  private ServerFixture fx;

  @BeforeEach
  void setUp() {
    api.init();
    api.expect().post().withPath("/apis/authentication.k8s.io/v1/tokenreviews")
        .andReply(201, request -> {
          TokenReview review = Serialization.unmarshal(request.getBody().readUtf8(), TokenReview.class);
          reviews.add(review);
          String token = review.getSpec().getToken();
          TokenReviewBuilder answer = new TokenReviewBuilder(review).withNewStatus()
              .withAudiences(review.getSpec().getAudiences())
              .endStatus();
          return switch (token) {
            case "agent-token" -> answer.editStatus().withAuthenticated(true)
                .withNewUser().withUsername(AGENT_USER).endUser().endStatus().build();
            case "other-token" -> answer.editStatus().withAuthenticated(true)
                .withNewUser().withUsername("system:serviceaccount:default:intruder").endUser().endStatus().build();
            default -> answer.editStatus().withAuthenticated(false).withError("invalid bearer token").endStatus().build();
          };
        })
        .always();
    client = api.createClient();
    fx = new ServerFixture(b -> b.agentTokenAuth(
        new AgentTokenAuth("kube-system", "konnectivity-agent", "system:konnectivity-server")), null, client);
  }

  @AfterEach
  void tearDown() throws Exception {
    fx.close();
    client.close();
    api.destroy();
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
}
