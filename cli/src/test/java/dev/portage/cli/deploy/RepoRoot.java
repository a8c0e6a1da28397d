package dev.portage.cli.deploy;

import java.nio.file.Files;
import java.nio.file.Path;

/** Finds the repository root (the directory holding {@code Containerfile}) from the test's working directory. */
final class RepoRoot {
  private RepoRoot() {}

  static Path find() {
    for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
      if (Files.isRegularFile(p.resolve("Containerfile")) && Files.isDirectory(p.resolve("deploy"))) {
        return p;
      }
    }
    throw new IllegalStateException(
        "no Containerfile + deploy/ above " + Path.of("").toAbsolutePath() + " (expected: run from the repository)");
  }
}
