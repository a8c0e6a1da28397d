package dev.portage.hub.cache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DiscoveryDocumentTest {

  private static final String V2 =
      "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

  @TempDir Path dir;

  @Test
  void recognisesDiscoveryPathsOnly() {
    for (String p : new String[] {"/api", "/api/v1", "/apis", "/apis/apps", "/apis/apps/v1",
        "/openapi/v2", "/openapi/v3", "/openapi/v3/apis/apps/v1", "/version"}) {
      assertThat(DiscoveryDocument.isDiscoveryPath(p)).as(p).isTrue();
    }
    for (String p : new String[] {"/", "", "/api/v1/pods", "/apis/apps/v1/deployments",
        "/openapi", "/openapi/v1", "/version/x", "/healthz", "/metrics"}) {
      assertThat(DiscoveryDocument.isDiscoveryPath(p)).as(p).isFalse();
    }
  }

  @Test
  void negotiatedDocumentsAreKeptPerAcceptAndPlainOnesForEveryClient() throws IOException {
    DiskCache cache = DiskCache.open(dir);
    byte[] body = "{\"kind\":\"APIGroupDiscoveryList\"}".getBytes(StandardCharsets.UTF_8);
    DiscoveryDocument aggregated = new DiscoveryDocument(V2, body);
    assertThat(aggregated.negotiated()).isTrue();
    assertThat(new DiscoveryDocument("application/json", body).negotiated()).isFalse();
    assertThat(DiscoveryDocument.name("/apis", V2)).isNotEqualTo(DiscoveryDocument.name("/apis", ""))
        .isNotEqualTo(DiscoveryDocument.name("/apis", "application/json"));

    String name = DiscoveryDocument.name("/apis", V2);
    assertThat(cache.putDiscovery(name, aggregated)).isEqualTo(DiskCache.WriteResult.WRITTEN);
    assertThat(cache.putDiscovery(name, aggregated)).isEqualTo(DiskCache.WriteResult.UNCHANGED);
    DiscoveryDocument back = cache.discovery(name).orElseThrow();
    assertThat(back.contentType()).isEqualTo(V2);
    assertThat(back.body()).isEqualTo(body);
    assertThat(cache.discovery(DiscoveryDocument.name("/apis", ""))).isEmpty();
    // Kept apart from the component directories.
    assertThat(cache.components()).isEmpty();
    try (var files = Files.list(dir.resolve(DiskCache.DISCOVERY_DIR))) {
      assertThat(files.toList()).hasSize(1);
    }
  }

  @Test
  void rejectsAMultiLineContentType() {
    assertThatThrownBy(() -> new DiscoveryDocument("a\nb", new byte[0]))
        .hasMessage("contentType: \"a\nb\" (expected: one line)");
  }
}
