package dev.portage.control.e2e;

import static dev.portage.control.e2e.RuleStream.TAG;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.portage.api.dds.ObserveResponse;
import dev.portage.control.ControlPlane;
import dev.portage.core.time.TimeSource;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.NettyChannelBuilder;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.pkitesting.CertificateBuilder;
import io.netty.pkitesting.X509Bundle;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The control plane with the file source, over real gRPC: edits in the directory reach dds subscribers. */
class FileSourceEndToEndTest {

  private static final Duration WAIT = Duration.ofSeconds(10);

  @TempDir Path dir;
  private final Planes planes = new Planes();

  @AfterEach
  void tearDown() throws Exception {
    planes.close();
  }

  /** Replaces the file in one step (write a hidden file, rename), as editors and ConfigMap volumes do. */
  private void writeTagRoute(String file, int priority) throws IOException {
    Path tmp = dir.resolve("." + file + ".tmp");
    Files.writeString(tmp, """
        apiVersion: dubbo.apache.org/v1alpha1
        kind: TagRoute
        metadata: {name: shop, namespace: default}
        spec: {key: shop, enabled: true, priority: %d}
        """.formatted(priority));
    Files.move(tmp, dir.resolve(file), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
  }

  private ControlPlane startOnDir() throws Exception {
    return planes.start(Planes.local().dir(dir).build());
  }

  @Test
  void subscriberGetsTheCurrentStateThenEveryEditOnceAndInOrder() throws Exception {
    writeTagRoute("tag.yaml", 1);
    ControlPlane plane = startOnDir();
    RuleStream s = RuleStream.open(planes.channel(plane), true);
    s.subscribe(TAG);

    ObserveResponse first = s.next();
    assertThat(first.getType()).isEqualTo(TAG);
    assertThat(first.getNonce()).isEqualTo("1");
    assertThat(RuleStream.keys(first)).containsExactly("shop/default");
    assertThat(RuleStream.priorities(first)).containsExactly(1);
    assertThat(first.getRevision()).isEqualTo(plane.store().kindRevision(TAG));

    long revision = first.getRevision();
    for (int priority = 2; priority <= 6; priority++) {
      writeTagRoute("tag.yaml", priority);
      // The next push is exactly this edit: a duplicate or a reordering of an earlier one would show here.
      ObserveResponse r = s.next();
      assertThat(RuleStream.priorities(r)).as("push after edit %d", priority).containsExactly(priority);
      assertThat(r.getNonce()).isEqualTo(Integer.toString(priority));
      assertThat(r.getRevision()).isGreaterThan(revision);
      revision = r.getRevision();
    }
    assertThat(s.closed).isNotDone();
  }

  @Test
  void reconnectWithTheLastRevisionGetsNothingItAlreadyHas() throws Exception {
    writeTagRoute("tag.yaml", 1);
    ControlPlane plane = startOnDir();
    ManagedChannel ch = planes.channel(plane);
    RuleStream before = RuleStream.open(ch, true);
    before.subscribe(TAG);
    long had = before.next().getRevision();
    before.cancel();

    RuleStream after = RuleStream.open(ch, true);
    after.send("rev:" + had, TAG);
    // Once the resumed subscription is in place, only a real change may produce a push.
    await().atMost(WAIT).until(() -> metric(plane, "portage_rules_connected_clients", "type=\"" + TAG + "\"") == 1.0);
    writeTagRoute("tag.yaml", 2);

    ObserveResponse r = after.next();
    assertThat(r.getRevision()).isGreaterThan(had);
    assertThat(RuleStream.priorities(r)).containsExactly(2);
    assertThat(after.received).isEqualTo(1);
  }

  @Test
  void malformedRequestsAreIgnoredAndTheStreamKeepsReceiving() throws Exception {
    writeTagRoute("tag.yaml", 1);
    ControlPlane plane = startOnDir();
    RuleStream s = RuleStream.open(planes.channel(plane), true);
    s.subscribe(TAG);
    assertThat(RuleStream.priorities(s.next())).containsExactly(1);

    s.send("", "no.such/v1/Kind");
    s.send("1", "");
    s.send("not-a-nonce", TAG);
    s.send("rev:not-a-number", "dubbo.apache.org/v1alpha1/ConditionRoute");
    await().atMost(WAIT).until(() -> metric(plane, "portage_rules_unknown_type_requests_total", "") >= 2.0
        && metric(plane, "portage_rules_stale_nonces_total", "type=\"" + TAG + "\"") >= 1.0);

    writeTagRoute("tag.yaml", 7);
    ObserveResponse r;
    do {
      r = s.next(); // the ConditionRoute subscription gets its (empty) state too
    } while (!r.getType().equals(TAG));
    assertThat(RuleStream.priorities(r)).containsExactly(7);
    assertThat(s.closed).isNotDone();
  }

  @Test
  void withoutDirServesTheBundledExamplesAndDeletesTheCopyOnClose() throws Exception {
    ControlPlane plane = planes.start(Planes.local().build());
    RuleStream s = RuleStream.open(planes.channel(plane), true);
    s.subscribe(TAG);
    assertThat(RuleStream.keys(s.next())).containsExactly("shop-provider.tag-router/default");

    String status = planes.get(plane, "/status").body();
    Matcher m = Pattern.compile("\"source\" : \"files:([^\"]+)\"").matcher(status);
    assertThat(m.find()).as(status).isTrue();
    Path copy = Path.of(m.group(1));
    assertThat(copy.resolve("services.yaml")).exists();

    plane.close();
    assertThat(copy).doesNotExist();
    assertThat(s.closed.get(5, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.UNAVAILABLE);
  }

  @Test
  void missingDirectoryFailsStartWithAClearMessage() {
    Path missing = dir.resolve("nope");
    ControlPlane plane = new ControlPlane(Planes.local().dir(missing).build(),
        TimeSource.system(planes.scheduler), planes.registry);
    assertThatThrownBy(plane::start)
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(missing.toString())
        .hasMessageContaining("expected: an existing directory");
    assertThat(plane.store().watchCount()).isZero();
    plane.close();
  }

  @Test
  void failedStartClosesWhatItOpenedAndTheRegistryCanBeReused() throws Exception {
    writeTagRoute("tag.yaml", 1);
    // The TLS files are read after the source and both servers are up: the failure comes mid-start.
    Path cert = dir.resolve("missing.crt");
    ControlPlane plane = new ControlPlane(Planes.local().dir(dir).tls(cert, dir.resolve("missing.key"), null).build(),
        TimeSource.system(planes.scheduler), planes.registry);
    assertThatThrownBy(plane::start).isInstanceOf(IOException.class).hasMessageContaining(cert.toString());
    assertThat(plane.store().watchCount()).as("rule and destination watches").isZero();
    assertThatThrownBy(plane::grpcAddress).isInstanceOf(IllegalStateException.class);
    plane.close();
    // Every metric was unregistered: a second control plane registers the same names again.
    ControlPlane again = startOnDir();
    assertThat(planes.get(again, "/readyz").statusCode()).isEqualTo(200);
  }

  @Test
  void mutualTlsOnTheGrpcPort() throws Exception {
    X509Bundle ca = new CertificateBuilder().subject("CN=test-ca").setIsCertificateAuthority(true).ecp256()
        .buildSelfSigned();
    X509Bundle server = new CertificateBuilder().subject("CN=localhost").addSanDnsName("localhost").ecp256()
        .buildIssuedBy(ca);
    X509Bundle client = new CertificateBuilder().subject("CN=app")
        .addSanUriName("spiffe://cluster.local/ns/default/sa/app").ecp256().buildIssuedBy(ca);
    writeTagRoute("tag.yaml", 3);
    ControlPlane plane = planes.start(Planes.local().dir(dir)
        .tls(server.toTempCertChainPem().toPath(), server.toTempPrivateKeyPem().toPath(), ca.toTempRootCertPem().toPath())
        .requireAuth(true)
        .build());

    ManagedChannel withCert = planes.closeLater(new ClosingChannel(NettyChannelBuilder.forAddress(plane.grpcAddress())
        .overrideAuthority("localhost")
        .sslContext(GrpcSslContexts.configure(SslContextBuilder.forClient()).trustManager(ca.getCertificate())
            .keyManager(client.getKeyPair().getPrivate(), client.getCertificatePath()).build())
        .build())).channel;
    RuleStream ok = RuleStream.open(withCert, true);
    ok.subscribe(TAG);
    assertThat(RuleStream.priorities(ok.next())).containsExactly(3);

    ManagedChannel noCert = planes.closeLater(new ClosingChannel(NettyChannelBuilder.forAddress(plane.grpcAddress())
        .overrideAuthority("localhost")
        .sslContext(GrpcSslContexts.configure(SslContextBuilder.forClient()).trustManager(ca.getCertificate()).build())
        .build())).channel;
    RuleStream refused = RuleStream.open(noCert, true);
    refused.subscribe(TAG);
    assertThat(refused.closed.get(10, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(refused.received).isZero();
  }

  private double metric(ControlPlane plane, String name, String labels) throws Exception {
    return Planes.sample(planes.get(plane, "/metrics").body(), name, labels);
  }

  private record ClosingChannel(ManagedChannel channel) implements AutoCloseable {
    @Override
    public void close() throws InterruptedException {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
  }
}
