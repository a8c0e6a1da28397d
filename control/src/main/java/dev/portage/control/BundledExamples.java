package dev.portage.control;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.FileSystem;
import java.nio.file.FileSystemAlreadyExistsException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * The example manifests shipped in the jar ({@code examples/} on the class path), copied into a fresh
 * temporary directory so that the file source can watch them and a user can edit them. The copy is
 * deleted by {@link #close()}. Not thread-safe; owned by one {@link ControlPlane}.
 */
final class BundledExamples implements AutoCloseable {

  /** Any file known to be in the directory: locates it inside a jar or a classes directory. */
  private static final String ANCHOR = "examples/README.md";

  private final Path directory;

  private BundledExamples(Path directory) {
    this.directory = directory;
  }

  /**
   * Copies every file of {@code examples/} into a new temporary directory.
   *
   * @throws UncheckedIOException if the examples are missing from the class path or cannot be copied
   */
  static BundledExamples extract() {
    URL anchor = BundledExamples.class.getClassLoader().getResource(ANCHOR);
    if (anchor == null) {
      throw new UncheckedIOException(new IOException(ANCHOR + " is not on the class path"));
    }
    Path target;
    try {
      target = Files.createTempDirectory("portage-examples-");
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create a directory for the bundled examples", e);
    }
    try {
      URI uri = anchor.toURI();
      if ("jar".equals(uri.getScheme())) {
        FileSystem jar;
        boolean ours = true;
        try {
          jar = FileSystems.newFileSystem(uri, Map.of());
        } catch (FileSystemAlreadyExistsException e) {
          jar = FileSystems.getFileSystem(uri); // someone else's: leave it open
          ours = false;
        }
        try {
          copyAll(jar.provider().getPath(uri).getParent(), target);
        } finally {
          if (ours) {
            jar.close();
          }
        }
      } else {
        copyAll(Path.of(uri).getParent(), target);
      }
      return new BundledExamples(target);
    } catch (IOException | URISyntaxException | RuntimeException e) {
      deleteTree(target);
      throw new UncheckedIOException(new IOException("cannot copy the bundled examples from " + anchor, e));
    }
  }

  private static void copyAll(Path from, Path to) throws IOException {
    List<Path> files;
    try (Stream<Path> s = Files.list(from)) {
      files = s.filter(Files::isRegularFile).toList();
    }
    for (Path f : files) {
      try (InputStream in = Files.newInputStream(f)) {
        Files.copy(in, to.resolve(f.getFileName().toString()), StandardCopyOption.REPLACE_EXISTING);
      }
    }
  }

  Path directory() {
    return directory;
  }

  /** Deletes the copy; a failure is left for the OS's temp cleaner. */
  @Override
  public void close() {
    deleteTree(directory);
  }

  private static void deleteTree(Path root) {
    try (Stream<Path> s = Files.walk(root)) {
      for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    } catch (IOException e) {
      // Best effort: the directory lives under the temp dir.
    }
  }
}
