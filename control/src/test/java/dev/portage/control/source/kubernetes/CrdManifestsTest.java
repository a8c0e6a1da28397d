package dev.portage.control.source.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** The CRDs shipped in deploy/crds define exactly the custom resources the source informs on. */
class CrdManifestsTest {

  private static final Path CRDS = Path.of("../deploy/crds");
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

  @Test
  void everyCrdMatchesAWatchedKindAndEveryCustomKindHasACrd() throws IOException {
    List<Path> files;
    try (Stream<Path> s = Files.list(CRDS)) {
      files = s.filter(p -> p.toString().endsWith(".yaml")).sorted().toList();
    }
    List<WatchedKind> defined = new ArrayList<>();
    for (Path file : files) {
      JsonNode crd = YAML.readTree(file.toFile());
      String where = file.getFileName().toString();
      assertThat(crd.path("apiVersion").asText()).as(where).isEqualTo("apiextensions.k8s.io/v1");
      assertThat(crd.path("kind").asText()).as(where).isEqualTo("CustomResourceDefinition");
      JsonNode spec = crd.path("spec");
      String group = spec.path("group").asText();
      String plural = spec.path("names").path("plural").asText();
      assertThat(crd.path("metadata").path("name").asText()).as(where).isEqualTo(plural + "." + group);
      assertThat(where).isEqualTo(group + "_" + plural + ".yaml");
      assertThat(spec.path("scope").asText()).as(where).isEqualTo("Namespaced");
      assertThat(spec.path("names").path("listKind").asText()).as(where)
          .isEqualTo(spec.path("names").path("kind").asText() + "List");
      assertThat(spec.path("versions")).as(where).hasSize(1);
      JsonNode version = spec.path("versions").get(0);
      assertThat(version.path("served").asBoolean()).as(where).isTrue();
      assertThat(version.path("storage").asBoolean()).as(where).isTrue();
      JsonNode schema = version.path("schema").path("openAPIV3Schema");
      assertThat(schema.path("type").asText()).as(where).isEqualTo("object");
      assertThat(schema.path("properties").path("spec").path("type").asText()).as(where).isEqualTo("object");
      defined.add(new WatchedKind(group, version.path("name").asText(), spec.path("names").path("kind").asText(), plural));
    }

    List<WatchedKind> custom = WatchedKind.ALL.stream()
        .filter(k -> !k.group().isEmpty() && !k.group().equals("discovery.k8s.io"))
        .toList();
    assertThat(custom).hasSize(7);
    assertThat(defined).containsExactlyInAnyOrderElementsOf(custom);
  }
}
