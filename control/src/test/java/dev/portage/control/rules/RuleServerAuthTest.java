package dev.portage.control.rules;

import static dev.portage.control.rules.DdsHarness.AUTHZ;
import static org.assertj.core.api.Assertions.assertThat;

import dev.portage.api.dds.ObserveResponse;
import dev.portage.api.dds.RuleServiceGrpc;
import dev.portage.api.dds.rules.AuthenticationPolicyToClient;
import dev.portage.api.dds.rules.AuthorizationPolicyToClient;
import dev.portage.control.store.ResourceStore;
import dev.portage.core.testing.MockApiServers;
import dev.portage.core.time.FakeClock;
import io.fabric8.kubernetes.api.model.authentication.TokenReview;
import io.fabric8.kubernetes.api.model.authentication.TokenReviewBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.netty.handler.ssl.ClientAuth;
import io.netty.pkitesting.CertificateBuilder;
import io.netty.pkitesting.X509Bundle;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Identity (TokenReview against a mock API server, SPIFFE client certificates) and policy filtering. */
class RuleServerAuthTest {

  // The JDK provider: with the pinned netty-tcnative 2.0.74, Netty 4.2.18's OpenSSL engine fails the
  // handshake (NoSuchMethodError SSL.getGroupName). The identity logic does not depend on the provider.
  private static final io.netty.handler.ssl.SslProvider JDK_TLS = io.netty.handler.ssl.SslProvider.JDK;

  private static final String AUTHN = "dubbo.apache.org/v1alpha1/AuthenticationPolicy";

  private KubernetesMockServer k8s;
  private KubernetesClient kube;
  private ExecutorService reviews;
  private DdsHarness h;

  @BeforeEach
  void setUp() {
    k8s = new KubernetesMockServer(false);
    k8s.init();
    kube = k8s.createClient();
    k8s.expect()
        .post()
        .withPath("/apis/authentication.k8s.io/v1/tokenreviews")
        .andReply(201, req -> review(kube.getKubernetesSerialization()
            .unmarshal(req.getUtf8Body(), TokenReview.class).getSpec().getToken()))
        .always();
    reviews = Executors.newSingleThreadExecutor();
  }

  @AfterEach
  void tearDown() throws Exception {
    if (h != null) {
      h.close();
    }
    reviews.shutdownNow();
    kube.close();
    MockApiServers.destroy(k8s);
  }

  private static TokenReview review(String token) {
    TokenReviewBuilder b = new TokenReviewBuilder().withNewSpec().withToken(token).endSpec();
    return switch (token) {
      case "token-a" -> b.withNewStatus().withAuthenticated(true)
          .withNewUser().withUsername("system:serviceaccount:a:app").endUser().endStatus().build();
      case "token-b" -> b.withNewStatus().withAuthenticated(true)
          .withNewUser().withUsername("system:serviceaccount:b:app").endUser().endStatus().build();
      case "token-user" -> b.withNewStatus().withAuthenticated(true)
          .withNewUser().withUsername("alice").endUser().endStatus().build();
      default -> b.withNewStatus().withAuthenticated(false).withError("invalid bearer token").endStatus().build();
    };
  }

  private void start(boolean requireAuth) throws Exception {
    h = new DdsHarness(
        RuleServerConfig.defaults().withRequireAuth(requireAuth),
        new KubernetesTokenAuthenticator(kube, reviews, "cluster.local"));
    h.put("AuthorizationPolicy", "dubbo-system", "all", "{\"action\":\"ALLOW\"}");
    h.put("AuthorizationPolicy", "a", "only-a", "{\"action\":\"DENY\"}");
    h.put("AuthorizationPolicy", "b", "only-b", "{\"action\":\"DENY\"}");
    h.put("AuthorizationPolicy", "dubbo-system", "for-b-sa",
        "{\"action\":\"ALLOW\",\"samples\":0.5,\"rules\":[{\"from\":{\"namespaces\":[\"x\"]},"
            + "\"to\":{\"principals\":[\"cluster.local/ns/b/sa/app\"]},\"when\":{\"key\":\"k\"}}]}");
    h.put("AuthenticationPolicy", "dubbo-system", "strict",
        "{\"action\":\"STRICT\",\"selector\":[{\"namespaces\":[\"a\"]}],\"portLevel\":[{\"port\":80,\"action\":\"NONE\"}]}");
  }

  private static Metadata bearer(String token) {
    Metadata md = new Metadata();
    md.put(PeerInfoInterceptor.AUTHORIZATION, "Bearer " + token);
    md.put(PeerInfoInterceptor.AUTHORIZATION_TYPE, "kubernetes");
    return md;
  }

  private static List<String> keys(ObserveResponse r) throws Exception {
    List<String> out = new java.util.ArrayList<>();
    for (var a : r.getDataList()) {
      out.add(a.getTypeUrl().endsWith("AuthorizationPolicyToClient")
          ? a.unpack(AuthorizationPolicyToClient.class).getKey()
          : a.unpack(AuthenticationPolicyToClient.class).getKey());
    }
    return out;
  }

  @Test
  void policiesAreFilteredByTheTokenNamespace() throws Exception {
    start(true);
    DdsHarness.Stream a = h.open(bearer("token-a"));
    a.subscribe(AUTHZ);
    assertThat(keys(a.next())).containsExactly("only-a/a", "all/dubbo-system");

    DdsHarness.Stream b = h.open(bearer("token-b"));
    b.subscribe(AUTHZ);
    ObserveResponse rb = b.next();
    assertThat(keys(rb)).containsExactly("only-b/b", "all/dubbo-system", "for-b-sa/dubbo-system");
    AuthorizationPolicyToClient forB = rb.getData(2).unpack(AuthorizationPolicyToClient.class);
    assertThat(forB.getSpec().getSamples()).isEqualTo(0.5f);
    assertThat(forB.getSpec().getRules(0).getFrom().getNamespacesList()).containsExactly("x");
    assertThat(forB.getSpec().getRules(0).getWhen().getKey()).isEqualTo("k");
  }

  @Test
  void anonymousClientGetsRootPoliciesOnly() throws Exception {
    start(false);
    DdsHarness.Stream s = h.open();
    s.subscribe(AUTHZ);
    assertThat(keys(s.next())).containsExactly("all/dubbo-system");
  }

  @Test
  void authenticationPolicySelectorPicksClients() throws Exception {
    start(true);
    DdsHarness.Stream a = h.open(bearer("token-a"));
    a.subscribe(AUTHN);
    ObserveResponse r = a.next();
    assertThat(keys(r)).containsExactly("strict/dubbo-system");
    AuthenticationPolicyToClient p = r.getData(0).unpack(AuthenticationPolicyToClient.class);
    assertThat(p.getSpec().getAction()).isEqualTo("STRICT");
    assertThat(p.getSpec().getPortLevel(0).getPort()).isEqualTo(80);

    DdsHarness.Stream b = h.open(bearer("token-b"));
    b.subscribe(AUTHN);
    assertThat(b.next().getDataList()).isEmpty();
  }

  @Test
  void rejectedTokenIsUnauthenticated() throws Exception {
    start(false);
    DdsHarness.Stream s = h.open(bearer("stolen"));
    s.subscribe(AUTHZ);
    Status st = s.status();
    assertThat(st.getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
    assertThat(st.getDescription()).isEqualTo("bearer token: token rejected by TokenReview: invalid bearer token");
    assertThat(s.responses).isEmpty();
    assertThat(h.server.metrics().disconnects.labelValues("unauthenticated").get()).isEqualTo(1);
    // the client sees the status before the server's call-closed callback has run
    org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10))
        .until(() -> h.server.connectionCount() == 0);
  }

  @Test
  void nonServiceAccountTokenIsUnauthenticated() throws Exception {
    start(false);
    DdsHarness.Stream s = h.open(bearer("token-user"));
    s.subscribe(AUTHZ);
    assertThat(s.status().getDescription()).isEqualTo("bearer token: token user alice is not a service account");
  }

  @Test
  void missingCredentialsAreUnauthenticatedWhenRequired() throws Exception {
    start(true);
    DdsHarness.Stream s = h.open();
    s.subscribe(AUTHZ);
    Status st = s.status();
    assertThat(st.getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
    assertThat(st.getDescription()).startsWith("no credentials");
  }

  @Test
  void unsupportedAuthorizationTypeAndMalformedHeaderAreUnauthenticated() throws Exception {
    start(false);
    Metadata jwt = bearer("x");
    jwt.put(PeerInfoInterceptor.AUTHORIZATION_TYPE, "dubbo-jwt");
    DdsHarness.Stream s = h.open(jwt);
    assertThat(s.status().getDescription()).isEqualTo("authorization-type: dubbo-jwt (expected: kubernetes)");

    Metadata basic = new Metadata();
    basic.put(PeerInfoInterceptor.AUTHORIZATION, "Basic dXNlcg==");
    DdsHarness.Stream t = h.open(basic);
    assertThat(t.status().getDescription()).isEqualTo("authorization: malformed (expected: Bearer <token>)");
  }

  @Test
  void spiffeClientCertificateGivesNamespaceAndIpOverRealTls() throws Exception {
    X509Bundle ca = new CertificateBuilder().subject("CN=test-ca").setIsCertificateAuthority(true).ecp256()
        .buildSelfSigned();
    X509Bundle serverCert = new CertificateBuilder().subject("CN=localhost").addSanDnsName("localhost").ecp256()
        .buildIssuedBy(ca);
    X509Bundle clientCert = new CertificateBuilder().subject("CN=app")
        .addSanUriName("spiffe://cluster.local/ns/a/sa/app").ecp256().buildIssuedBy(ca);

    FakeClock clock = new FakeClock();
    ResourceStore store = new ResourceStore();
    RuleServer rules = new RuleServer(RuleServerConfig.defaults().withRequireAuth(true), store,
        clock.timeSource(), new PrometheusRegistry(), null);
    rules.start();
    Server server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
        .sslContext(GrpcSslContexts.configure(io.netty.handler.ssl.SslContextBuilder.forServer(
                serverCert.getKeyPair().getPrivate(), serverCert.getCertificatePath()), JDK_TLS)
            .trustManager(ca.getCertificate()).clientAuth(ClientAuth.OPTIONAL).build())
        .addService(rules.serviceDefinition())
        .build()
        .start();
    ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", server.getPort())
        .overrideAuthority("localhost")
        .sslContext(GrpcSslContexts.configure(io.netty.handler.ssl.SslContextBuilder.forClient(), JDK_TLS).trustManager(ca.getCertificate())
            .keyManager(clientCert.getKeyPair().getPrivate(), clientCert.getCertificatePath()).build())
        .build();
    try {
      putPolicy(store, "dubbo-system", "loopback-only",
          "{\"action\":\"ALLOW\",\"rules\":[{\"to\":{\"ipBlocks\":[\"127.0.0.0/8\"]}}]}");
      putPolicy(store, "dubbo-system", "elsewhere",
          "{\"action\":\"ALLOW\",\"rules\":[{\"to\":{\"ipBlocks\":[\"10.0.0.0/8\"]}}]}");
      putPolicy(store, "a", "ns-a", "{\"action\":\"DENY\"}");
      putPolicy(store, "b", "ns-b", "{\"action\":\"DENY\"}");

      DdsHarness.Stream s = new DdsHarness.Stream();
      s.requests = RuleServiceGrpc.newStub(channel).observe(s);
      s.subscribe(AUTHZ);
      assertThat(keys(s.next())).containsExactly("ns-a/a", "loopback-only/dubbo-system");
      s.requests.onCompleted();
      assertThat(s.status().isOk()).isTrue();
    } finally {
      rules.close();
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
  }

  private static void putPolicy(ResourceStore store, String ns, String name, String spec) throws Exception {
    var body = DdsHarness.JSON.createObjectNode();
    body.put("apiVersion", "dubbo.apache.org/v1alpha1");
    body.put("kind", "AuthorizationPolicy");
    body.putObject("metadata").put("name", name).put("namespace", ns);
    body.set("spec", DdsHarness.JSON.readTree(spec));
    store.put(dev.portage.control.store.SourceObject.of(body, "1"), 0);
  }
}
