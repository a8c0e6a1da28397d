package dev.portage.proxy.service;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Services from a YAML endpoints file ({@link EndpointsFile}), re-read when the file changes. The
 * directory is watched rather than the file, so editors that write a new file and rename it, and
 * Kubernetes ConfigMap volumes that swap a symlink, are noticed too. A malformed file is reported
 * (WARN with file:line, and {@link #reload()} throws) and the last good state stays in force.
 *
 * <p>One daemon thread waits on the {@link WatchService}; {@link #reload()} may also be called
 * directly. Reloads are serialised, and a state is delivered only when the file's content changed.
 */
final class FileEndpointSource implements EndpointSource {

  private static final Logger log = LoggerFactory.getLogger(FileEndpointSource.class);

  private final Path file;
  private final boolean watch;
  private final Runnable onError;
  private final Object lock = new Object();
  private Consumer<Map<String, ServiceSpec>> listener; // guarded by lock
  private String lastGoodText; // guarded by lock
  private WatchService watcher; // guarded by lock
  private Thread thread; // guarded by lock
  private boolean closed; // guarded by lock

  /**
   * @param watch whether to watch the directory for changes (tests may pass false and call reload)
   * @param onError called once per rejected file (for a metric)
   */
  FileEndpointSource(Path file, boolean watch, Runnable onError) {
    this.file = Objects.requireNonNull(file, "file").toAbsolutePath();
    this.watch = watch;
    this.onError = Objects.requireNonNull(onError, "onError");
  }

  @Override
  public void start(Consumer<Map<String, ServiceSpec>> listener) throws IOException {
    Objects.requireNonNull(listener, "listener");
    synchronized (lock) {
      if (this.listener != null || closed) {
        throw new IllegalStateException("file source " + file + ": already started or closed");
      }
      this.listener = listener;
      reload(); // a bad file at start-up is a configuration error: fail start
      if (watch) {
        Path dir = file.getParent();
        watcher = FileSystems.getDefault().newWatchService();
        dir.register(
            watcher,
            StandardWatchEventKinds.ENTRY_CREATE,
            StandardWatchEventKinds.ENTRY_MODIFY,
            StandardWatchEventKinds.ENTRY_DELETE);
        WatchService w = watcher;
        thread =
            Thread.ofPlatform()
                .daemon()
                .name("portage-endpoints-file-watch")
                .start(() -> watchLoop(w));
      }
    }
    log.info("Endpoints file {} loaded{}", file, watch ? " and watched" : "");
  }

  /**
   * Reads the file again and delivers its services if its content changed since the last good read.
   *
   * @return whether a new state was delivered
   * @throws MalformedEndpointsFileException if the file is malformed; the last good state stays
   * @throws IOException if the file cannot be read
   */
  boolean reload() throws IOException {
    synchronized (lock) {
      if (closed || listener == null) {
        return false;
      }
      String text;
      try {
        text = Files.readString(file, StandardCharsets.UTF_8);
      } catch (IOException e) {
        onError.run();
        throw new IOException(file + ": cannot read: " + e.getMessage(), e);
      }
      if (text.equals(lastGoodText)) {
        return false;
      }
      Map<String, ServiceSpec> services;
      try {
        services = EndpointsFile.parse(file, text);
      } catch (MalformedEndpointsFileException e) {
        onError.run();
        throw e;
      }
      lastGoodText = text;
      log.debug("Endpoints file {}: {} services", file, services.size());
      listener.accept(services);
      return true;
    }
  }

  private void watchLoop(WatchService w) {
    Path name = file.getFileName();
    try {
      while (true) {
        WatchKey key = w.take();
        boolean relevant = false;
        for (var event : key.pollEvents()) {
          // Overflow, our file, or (ConfigMap volumes) the ..data symlink swap: reload to be sure.
          relevant |= event.kind() == StandardWatchEventKinds.OVERFLOW
              || name.equals(event.context())
              || String.valueOf(event.context()).startsWith("..");
        }
        key.reset();
        if (relevant) {
          reloadLogged();
        }
      }
    } catch (InterruptedException | ClosedWatchServiceException e) {
      log.debug("Endpoints file watch of {} ended", file);
    }
  }

  private void reloadLogged() {
    try {
      reload();
    } catch (MalformedEndpointsFileException e) {
      log.warn("Endpoints file rejected, keeping the last good state: {}", e.getMessage());
    } catch (IOException e) {
      log.warn("Endpoints file not reloaded, keeping the last good state: {}", e.getMessage());
    }
  }

  @Override
  public void close() {
    WatchService w;
    Thread t;
    synchronized (lock) {
      if (closed) {
        return;
      }
      closed = true;
      w = watcher;
      t = thread;
    }
    if (w != null) {
      try {
        w.close();
      } catch (IOException e) {
        log.debug("Closing the watch of {} failed", file, e);
      }
    }
    if (t != null) {
      t.interrupt();
    }
  }

  @Override
  public String toString() {
    return "file " + file;
  }
}
