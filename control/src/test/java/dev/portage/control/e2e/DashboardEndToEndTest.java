package dev.portage.control.e2e;

import static dev.portage.control.e2e.RuleStream.TAG;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.portage.api.dds.ObserveResponse;
import dev.portage.control.ControlPlane;
import dev.portage.core.admin.DashboardJson;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The control plane's {@code /dashboard/state} as a real dds client subscribes, holds its ACK and leaves. */
class DashboardEndToEndTest {

  @TempDir Path dir;
  private final Planes planes = new Planes();
  private ControlPlane plane;

  @AfterEach
  void tearDown() throws Exception {
    planes.close();
  }

  private DashboardJson state() throws Exception {
    var r = planes.get(plane, "/dashboard/state");
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    return DashboardJson.parse(r.body());
  }

  private DashboardJson awaitState(Predicate<DashboardJson> condition) {
    DashboardJson[] last = new DashboardJson[1];
    await().atMost(Duration.ofSeconds(10)).until(() -> condition.test(last[0] = state()));
    return last[0];
  }

  private static Map<String, Object> type(DashboardJson s, String type) {
    return s.rows("dds rule types").stream().filter(r -> type.equals(r.get("type"))).findFirst().orElseThrow();
  }

  @Test
  void showsSubscribersRevisionsAndUnacknowledgedPushesPerType() throws Exception {
    Files.writeString(dir.resolve("tag.yaml"), """
        apiVersion: dubbo.apache.org/v1alpha1
        kind: TagRoute
        metadata: {name: shop, namespace: default}
        spec: {key: shop, priority: 1}
        """);
    plane = planes.start(Planes.local().dir(dir).build());
    DashboardJson idle = state();
    assertThat(idle.component()).isEqualTo("control-plane");
    assertThat(idle.titles()).containsExactly("Control plane", "dds rule types", "Stored kinds", "Readiness");
    assertThat(idle.fields("Control plane"))
        .containsEntry("source", "files:" + dir.toRealPath())
        .containsEntry("synced", true)
        .containsEntry("store revision", plane.store().revision())
        .containsEntry("dds connections", 0L);
    assertThat(type(idle, TAG))
        .containsEntry("revision", plane.store().kindRevision(TAG))
        .containsEntry("objects", 1L)
        .containsEntry("subscribers", 0L)
        .containsEntry("unacknowledged pushes", 0L);
    assertThat(idle.rows("Stored kinds")).contains(
        Map.of("kind", TAG, "objects", 1L, "revision", plane.store().kindRevision(TAG)));

    RuleStream s = RuleStream.open(planes.channel(plane), false);
    s.subscribe(TAG);
    ObserveResponse push = s.next();
    DashboardJson unacked = state();
    assertThat(unacked.fields("Control plane"))
        .containsEntry("dds connections", 1L)
        .containsEntry("grpc connections", 1L);
    assertThat(type(unacked, TAG))
        .containsEntry("revision", push.getRevision())
        .containsEntry("subscribers", 1L)
        .containsEntry("unacknowledged pushes", 1L)
        .containsEntry("pushes sent", 1L);

    s.ack(push);
    awaitState(st -> Long.valueOf(0).equals(type(st, TAG).get("unacknowledged pushes")));

    s.cancel();
    DashboardJson gone = awaitState(st -> Long.valueOf(0).equals(type(st, TAG).get("subscribers")));
    assertThat(gone.fields("Control plane")).containsEntry("dds connections", 0L);
  }
}
