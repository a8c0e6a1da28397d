package dev.portage.cli.deploy;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MappingIterator;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/** Every YAML document under a directory tree, with the parse problems of the files that do not parse. */
final class ManifestSet {
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

  private final List<ManifestDoc> docs;
  private final List<String> problems;

  private ManifestSet(List<ManifestDoc> docs, List<String> problems) {
    this.docs = List.copyOf(docs);
    this.problems = List.copyOf(problems);
  }

  /** Reads {@code *.yaml}/{@code *.yml} under {@code dir}; problems name files relative to {@code root}. */
  static ManifestSet load(Path root, Path dir) throws IOException {
    List<ManifestDoc> docs = new ArrayList<>();
    List<String> problems = new ArrayList<>();
    List<Path> files;
    try (Stream<Path> walk = Files.walk(dir)) {
      files = walk.filter(Files::isRegularFile)
          .filter(p -> p.toString().endsWith(".yaml") || p.toString().endsWith(".yml"))
          .sorted()
          .toList();
    }
    for (Path file : files) {
      Path rel = root.relativize(file);
      int index = 0;
      try (MappingIterator<JsonNode> it = YAML.readerFor(JsonNode.class).readValues(file.toFile())) {
        while (it.hasNextValue()) {
          JsonNode node = it.nextValue();
          index++;
          if (node == null || node.isNull() || node.isMissingNode()) {
            continue;
          }
          ManifestDoc doc = new ManifestDoc(rel, index, node);
          if (!node.isObject() || doc.kind().isEmpty() || node.path("apiVersion").asText("").isEmpty()
              || doc.name().isEmpty()) {
            problems.add(rel + " (doc " + index + "): not a Kubernetes object (expected: apiVersion, kind, metadata.name)");
            continue;
          }
          docs.add(doc);
        }
      } catch (JsonProcessingException e) {
        problems.add(rel + ": does not parse at line " + e.getLocation().getLineNr() + ": " + e.getOriginalMessage());
      } catch (RuntimeException e) {
        // MappingIterator wraps parse errors of later documents in an unchecked exception
        Throwable cause = e.getCause() instanceof JsonProcessingException j ? j : e;
        problems.add(rel + ": does not parse: " + cause.getMessage());
      }
    }
    return new ManifestSet(docs, problems);
  }

  List<ManifestDoc> docs() {
    return docs;
  }

  List<ManifestDoc> ofKind(String kind) {
    return docs.stream().filter(d -> d.kind().equals(kind)).toList();
  }

  List<String> parseProblems() {
    return problems;
  }
}
