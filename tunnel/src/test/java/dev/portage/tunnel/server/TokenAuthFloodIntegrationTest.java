package dev.portage.tunnel.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.portage.core.testing.MockApiServers;
import dev.portage.core.time.FakeClock;
import dev.portage.tunnel.wire.Metadata;
import io.fabric8.kubernetes.api.model.authentication.TokenReview;
import io.fabric8.kubernetes.api.model.authentication.TokenReviewBuilder;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.netty.NettyChannelBuilder;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A flood of agent connects while the API server does not answer TokenReviews: the server spends a
 * bounded number of threads, API connections and waiting agents on it, refuses the rest with
 * UNAVAILABLE at once, and recovers when the API server does.
 */
class TokenAuthFloodIntegrationTest {
  private static final String AGENT_USER = "system:serviceaccount:kube-system:konnectivity-agent";
  private static final int AGENTS = 1000;

  private final KubernetesMockServer api = new KubernetesMockServer(false);
  private final CountDownLatch stall = new CountDownLatch(1);
  private final AtomicInteger reviews = new AtomicInteger();
  private final FakeClock clock = new FakeClock();
  private final List<TestStream> streams = new ArrayList<>();
  private KubernetesClient client;
  private ManagedChannel channel;
  private ServerFixture fx;

  @BeforeEach
  void setUp() {
    api.init();
    api.expect().post().withPath("/apis/authentication.k8s.io/v1/tokenreviews")
        .andReply(201, request -> {
          TokenReview review = Serialization.unmarshal(request.getBody().readUtf8(), TokenReview.class);
          reviews.incrementAndGet();
          try {
            stall.await(60, TimeUnit.SECONDS); // the API server stalls until the test lets it go
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          return new TokenReviewBuilder(review).withNewStatus().withAuthenticated(true)
              .withNewUser().withUsername(AGENT_USER).endUser().endStatus().build();
        })
        .always();
    try (KubernetesClient mock = api.createClient()) {
      client = new KubernetesClientBuilder().withConfig(new ConfigBuilder(mock.getConfiguration())
          .withRequestTimeout(60_000).withRequestRetryBackoffLimit(0).build()).build();
    }
    fx = new ServerFixture(b -> b.agentTokenAuth(
        new AgentTokenAuth("kube-system", "konnectivity-agent", "system:konnectivity-server")), clock.timeSource(), client);
    // One connection, callbacks on its transport thread: the client side adds no thread per stream.
    channel = NettyChannelBuilder.forAddress("127.0.0.1", fx.server.agentPort()).usePlaintext().directExecutor().build();
  }

  @AfterEach
  void tearDown() throws Exception {
    stall.countDown();
    for (TestStream s : streams) {
      s.close();
    }
    channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
    fx.close();
    client.close();
    MockApiServers.destroy(api);
  }

  private TestStream agent(String token) {
    io.grpc.Metadata md = new io.grpc.Metadata();
    md.put(Metadata.AGENT_ID, "agent-" + streams.size());
    md.put(Metadata.AUTHORIZATION, "Bearer " + token);
    TestStream s = TestStream.agent(channel, md);
    streams.add(s);
    return s;
  }

  private static int threads() {
    return ManagementFactory.getThreadMXBean().getThreadCount();
  }

  private static long fds() throws IOException {
    try (var list = Files.list(Path.of("/proc/self/fd"))) {
      return list.count();
    }
  }

  private long closedWith(Status.Code code) {
    return streams.stream().filter(s -> s.status() != null && s.status().getCode() == code).count();
  }

  @Test
  void distinctTokensAgainstAStalledApiServerCostBoundedThreadsAndConnections() throws Exception {
    int threadsBefore = threads();
    long fdsBefore = fds();
    for (int i = 0; i < AGENTS; i++) {
      agent("token-" + i);
    }
    int reviewing = TokenReviewAuthenticator.MAX_CONCURRENT_REVIEWS;
    int waiting = reviewing + TokenReviewAuthenticator.MAX_QUEUED_REVIEWS;
    // Four reviews are stuck in the API server and 64 queued behind them; every other agent is told at
    // once to come back later.
    await().atMost(Duration.ofSeconds(30)).until(() -> closedWith(Status.Code.UNAVAILABLE) == AGENTS - waiting);
    assertThat(streams.stream().filter(s -> s.status() != null && s.status().getCode() == Status.Code.UNAVAILABLE)
        .map(s -> s.status().getDescription()).distinct())
        .containsExactly("too many token reviews queued (64 behind 4 running)");
    await().atMost(Duration.ofSeconds(10)).until(() -> reviews.get() >= 1);
    assertThat(reviews.get()).isLessThanOrEqualTo(reviewing);
    assertThat(threads() - threadsBefore).as("threads added by 1000 connects").isLessThan(40);
    assertThat(fds() - fdsBefore).as("file descriptors added by 1000 connects").isLessThan(60);
    assertThat(fx.server.ready()).isFalse();

    // The waiting agents give up after 10 s.
    clock.advance(Duration.ofSeconds(10));
    await().atMost(Duration.ofSeconds(10)).until(() -> closedWith(Status.Code.UNAVAILABLE) == AGENTS);
    assertThat(fx.metric("konnectivity_network_proxy_server_token_reviews", "outcome", "timeout")).isEqualTo(waiting);

    // The API server answers again: the reviews that were stuck finish, and agents get in.
    stall.countDown();
    await().atMost(Duration.ofSeconds(30)).until(() -> reviews.get() == waiting);
    TestStream late = agent("token-new");
    late.awaitHeaders();
    assertThat(fx.server.ready()).isTrue();
  }

  @Test
  void oneTokenPresentedByManyAgentsIsReviewedOnce() throws Exception {
    int threadsBefore = threads();
    for (int i = 0; i < AGENTS; i++) {
      agent("fleet-token");
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> reviews.get() == 1);
    assertThat(threads() - threadsBefore).as("threads added by 1000 connects").isLessThan(40);
    assertThat(streams.stream().filter(s -> s.status() != null)).isEmpty();

    stall.countDown();
    for (TestStream s : streams) {
      s.awaitHeaders();
    }
    assertThat(reviews.get()).isEqualTo(1);
    await().atMost(Duration.ofSeconds(10)).until(() ->
        fx.metric("konnectivity_network_proxy_server_grpc_connections", "service_method", "Connect") == AGENTS);
  }
}
