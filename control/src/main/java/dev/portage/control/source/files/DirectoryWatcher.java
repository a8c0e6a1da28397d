package dev.portage.control.source.files;

import static java.nio.file.StandardWatchEventKinds.ENTRY_CREATE;
import static java.nio.file.StandardWatchEventKinds.ENTRY_DELETE;
import static java.nio.file.StandardWatchEventKinds.ENTRY_MODIFY;

import java.io.IOException;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.Path;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells its owner that something in one directory changed (created, modified, deleted, renamed in or
 * out, or events overflowed) — not what: the owner rescans. One daemon thread blocks on the JDK
 * {@link WatchService} (inotify on Linux) until {@link #close()}.
 */
final class DirectoryWatcher implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(DirectoryWatcher.class);

  private final Path directory;
  private final Runnable onChange;
  private final WatchService service;
  private final Thread thread;

  DirectoryWatcher(Path directory, Runnable onChange) throws IOException {
    this.directory = directory;
    this.onChange = onChange;
    this.service = directory.getFileSystem().newWatchService();
    try {
      directory.register(service, ENTRY_CREATE, ENTRY_DELETE, ENTRY_MODIFY);
    } catch (IOException | RuntimeException e) {
      service.close();
      throw e;
    }
    this.thread = Thread.ofPlatform().daemon().name("portage-files-watch").unstarted(this::loop);
  }

  void start() {
    thread.start();
  }

  private void loop() {
    while (true) {
      WatchKey key;
      try {
        key = service.take();
      } catch (ClosedWatchServiceException | InterruptedException e) {
        return;
      }
      key.pollEvents(); // which file does not matter: the owner rescans the directory
      try {
        onChange.run();
      } catch (RuntimeException e) {
        log.warn("file source: change handler for {} failed", directory, e);
      }
      if (!key.reset()) {
        log.warn("file source: {} can no longer be watched (deleted or unmounted?); changes are no longer followed",
            directory);
        return;
      }
    }
  }

  @Override
  public void close() {
    try {
      service.close();
    } catch (IOException e) {
      log.debug("file source: closing the watch service of {}", directory, e);
    }
    if (Thread.currentThread() != thread && thread.isAlive()) {
      try {
        thread.join();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
