package dev.portage.tunnel.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

class KubeClientsTest {
  private static final String KUBECONFIG = """
      apiVersion: v1
      kind: Config
      clusters:
      - name: c
        cluster: {server: "https://127.0.0.1:6443"}
      users:
      - name: u
        user: {token: t}
      contexts:
      - name: x
        context: {cluster: c, user: u}
      current-context: x
      """;

  @TempDir Path dir;
  private final Logger logger = (Logger) LoggerFactory.getLogger(KubeClients.class);
  private final ListAppender<ILoggingEvent> logs = new ListAppender<>();
  private Path kubeconfig;

  @BeforeEach
  void setUp() throws Exception {
    kubeconfig = Files.writeString(dir.resolve("kubeconfig"), KUBECONFIG);
    logs.start();
    logger.addAppender(logs);
  }

  @AfterEach
  void tearDown() {
    logger.detachAppender(logs);
  }

  @Test
  void upstreamsDefaultProtobufAndJsonAreTakenWithoutAWarning() throws Exception {
    for (String type : new String[] {KubeClients.PROTOBUF, KubeClients.JSON, "application/json; charset=utf-8"}) {
      try (KubernetesClient client = KubeClients.create(kubeconfig, 0, 0, type)) {
        assertThat(client.getMasterUrl().toString()).startsWith("https://127.0.0.1:6443");
      }
    }
    assertThat(warnings()).isZero();
  }

  @Test
  void anotherContentTypeLogsOneWarningNamingIt() throws Exception {
    try (KubernetesClient ignored = KubeClients.create(kubeconfig, 0, 0, "application/yaml")) {
      assertThat(warnings()).isEqualTo(1);
      assertThat(logs.list.get(0).getFormattedMessage()).contains("--kube-api-content-type=application/yaml");
    }
  }

  @Test
  void negativeRatesAreRefusedWithTheFlagName() {
    assertThatThrownBy(() -> KubeClients.create(kubeconfig, -1, 0, KubeClients.JSON))
        .hasMessageContaining("kubeconfig-qps");
    assertThatThrownBy(() -> KubeClients.create(kubeconfig, 0, -1, KubeClients.JSON))
        .hasMessageContaining("kubeconfig-burst");
  }

  private long warnings() {
    return logs.list.stream().filter(e -> e.getLevel() == Level.WARN).count();
  }
}
