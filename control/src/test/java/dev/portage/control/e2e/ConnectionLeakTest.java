package dev.portage.control.e2e;

import static dev.portage.control.e2e.RuleStream.TAG;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.portage.api.linkerd.destination.DestinationGrpc;
import dev.portage.api.linkerd.destination.GetDestination;
import dev.portage.control.ControlPlane;
import io.grpc.Context;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Connections and streams that end, however they end, leave nothing behind in the control plane. */
class ConnectionLeakTest {

  @TempDir Path dir;
  private final Planes planes = new Planes();

  @AfterEach
  void tearDown() throws Exception {
    planes.close();
  }

  @Test
  void thousandConnectDisconnectCyclesLeaveNoStreamsBehind() throws Exception {
    Files.writeString(dir.resolve("tag.yaml"), """
        apiVersion: dubbo.apache.org/v1alpha1
        kind: TagRoute
        metadata: {name: shop, namespace: default}
        spec: {key: shop, priority: 1}
        """);
    ControlPlane plane = planes.start(Planes.local().dir(dir).build());
    ManagedChannel shared = planes.channel(plane);
    int watchesBefore = plane.store().watchCount();

    int batch = 100;
    for (int round = 0; round < 10; round++) {
      // Every round also opens and drops one whole connection, so transports come and go too.
      ManagedChannel own = NettyChannelBuilder.forAddress(plane.grpcAddress()).usePlaintext().build();
      List<RuleStream> rules = new ArrayList<>();
      List<DestinationKubernetesEndToEndTest.Updates> gets = new ArrayList<>();
      List<Context.CancellableContext> contexts = new ArrayList<>();
      for (int i = 0; i < batch; i++) {
        ManagedChannel ch = i % 10 == 0 ? own : shared;
        RuleStream r = RuleStream.open(ch, true);
        r.subscribe(TAG);
        rules.add(r);
        Context.CancellableContext ctx = Context.current().withCancellation();
        DestinationKubernetesEndToEndTest.Updates u = new DestinationKubernetesEndToEndTest.Updates();
        ctx.run(() -> DestinationGrpc.newStub(ch).get(
            GetDestination.newBuilder().setScheme("k8s").setPath("web.default.svc.cluster.local:8080").build(), u));
        gets.add(u);
        contexts.add(ctx);
      }
      for (int i = 0; i < batch; i++) {
        rules.get(i).next();
        gets.get(i).next();
        // Half the rule streams end with a client half-close, half with a cancel.
        if (i % 2 == 0) {
          rules.get(i).complete();
        } else {
          rules.get(i).cancel();
        }
        contexts.get(i).cancel(null);
      }
      own.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }

    await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
      assertThat(plane.ruleConnectionCount()).as("rule connections").isZero();
      assertThat(plane.destinationStreamCount()).as("destination streams").isZero();
      assertThat(plane.grpcConnectionCount()).as("gRPC connections").isEqualTo(1);
    });
    assertThat(plane.store().watchCount()).isEqualTo(watchesBefore);
    String metrics = planes.get(plane, "/metrics").body();
    assertThat(Planes.sample(metrics, "portage_rules_connections", "")).isZero();
    assertThat(Planes.sample(metrics, "portage_rules_connected_clients", "type=\"" + TAG + "\"")).isZero();
    assertThat(Planes.sample(metrics, "portage_destination_streams", "rpc=\"Get\"")).isZero();

    shared.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    await().atMost(Duration.ofSeconds(10)).until(() -> plane.grpcConnectionCount() == 0);
  }
}
