package dev.portage.core.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(MockApiServerExtension.class)
class MockApiServerExtensionTest {

  static KubernetesClient shared;
  KubernetesMockServer server;
  KubernetesClient client;

  @Test
  void instanceFieldsGetAFreshCrudServerAndStaticOnesOneForTheClass() {
    assertThat(client).isNotNull().isNotSameAs(shared);
    assertThat(shared).isNotNull();
    client.configMaps().inNamespace("a").resource(new ConfigMapBuilder()
        .withNewMetadata().withName("c").withNamespace("a").endMetadata()
        .withData(Map.of("k", "v")).build()).create();

    assertThat(client.configMaps().inNamespace("a").withName("c").get().getData()).containsEntry("k", "v");
    // a different server: the class-wide one has not seen the write
    assertThat(shared.configMaps().inNamespace("a").list().getItems()).isEmpty();
  }

  @Test
  void expectationsAnswerBeforeTheStore() {
    server.expect().get().withPath("/api/v1/namespaces/a/configmaps/c")
        .andReturn(200, new ConfigMapBuilder().withNewMetadata().withName("c").endMetadata()
            .withData(Map.of("from", "expectation")).build())
        .once();

    assertThat(client.configMaps().inNamespace("a").withName("c").get().getData())
        .containsEntry("from", "expectation");
    assertThat(client.configMaps().inNamespace("a").withName("c").get()).isNull();
  }

  @Test
  void destroyingTwiceIsHarmless() {
    KubernetesMockServer own = MockApiServers.startCrud();
    MockApiServers.destroy(own);
    assertThatCode(() -> MockApiServers.destroy(own)).doesNotThrowAnyException();
  }
}
