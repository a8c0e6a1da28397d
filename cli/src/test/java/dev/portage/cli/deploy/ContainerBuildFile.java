package dev.portage.cli.deploy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The instructions of a Containerfile/Dockerfile, joined across line continuations, with the
 * image name the manifests must use (label {@code dev.portage.image}).
 */
final class ContainerBuildFile {
  private static final Pattern IMAGE_LABEL = Pattern.compile("dev\\.portage\\.image=\"?([^\"\\s]+)\"?");

  /** One instruction: keyword upper-cased, the rest as written, and its first line number. */
  record Instruction(int line, String keyword, String rest) {}

  private final Path file;
  private final List<Instruction> instructions;

  private ContainerBuildFile(Path file, List<Instruction> instructions) {
    this.file = file;
    this.instructions = List.copyOf(instructions);
  }

  static ContainerBuildFile parse(Path file) throws IOException {
    List<String> lines = Files.readAllLines(file);
    List<Instruction> out = new ArrayList<>();
    StringBuilder current = null;
    int start = 0;
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i).strip();
      if (current == null && (line.isEmpty() || line.startsWith("#"))) {
        continue;
      }
      if (current != null && line.startsWith("#")) {
        continue; // comment lines inside a continued instruction are dropped, as by the builder
      }
      boolean continued = line.endsWith("\\");
      String body = continued ? line.substring(0, line.length() - 1).strip() : line;
      if (current == null) {
        current = new StringBuilder(body);
        start = i + 1;
      } else {
        current.append(' ').append(body);
      }
      if (!continued) {
        String text = current.toString();
        int space = text.indexOf(' ');
        String keyword = (space < 0 ? text : text.substring(0, space)).toUpperCase(Locale.ROOT);
        out.add(new Instruction(start, keyword, space < 0 ? "" : text.substring(space + 1).strip()));
        current = null;
      }
    }
    return new ContainerBuildFile(file, out);
  }

  Path file() {
    return file;
  }

  List<Instruction> instructions() {
    return instructions;
  }

  List<Instruction> all(String keyword) {
    return instructions.stream().filter(i -> i.keyword().equals(keyword)).toList();
  }

  /** Instructions of the last stage (after the last FROM). */
  List<Instruction> finalStage() {
    int lastFrom = -1;
    for (int i = 0; i < instructions.size(); i++) {
      if (instructions.get(i).keyword().equals("FROM")) {
        lastFrom = i;
      }
    }
    return lastFrom < 0 ? List.of() : instructions.subList(lastFrom, instructions.size());
  }

  /** The image name every manifest must use, from the {@code dev.portage.image} label. */
  String imageName() {
    for (Instruction i : all("LABEL")) {
      Matcher m = IMAGE_LABEL.matcher(i.rest());
      if (m.find()) {
        return m.group(1);
      }
    }
    throw new IllegalStateException(file + ": no LABEL dev.portage.image=<image> (expected: the image name the manifests use)");
  }
}
