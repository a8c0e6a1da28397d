package dev.portage.control.source.files;

import dev.portage.control.source.Kinds;
import dev.portage.control.source.Source;
import dev.portage.control.store.ResourceKey;
import dev.portage.control.store.ResourceStore;
import dev.portage.control.store.SourceObject;
import dev.portage.core.time.TimeSource;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The embedded default source: a directory of Kubernetes-style YAML manifests ({@code *.yaml},
 * {@code *.yml}; multi-document files and {@code kind: List} allowed; hidden files ignored, no
 * sub-directories) holding objects of {@link Kinds#ALL}.
 *
 * <p>Loads everything at {@link #start()}, then follows changes: any event in the directory (create,
 * edit, delete, an editor's atomic rename, a Kubernetes ConfigMap volume's symlink swap) schedules one
 * rescan {@link #DEFAULT_DEBOUNCE} later on the injected scheduler, coalescing bursts. A rescan
 * re-reads only files whose content changed; each file's objects replace what that file contributed
 * before.
 *
 * <p>Rules:
 * <ul>
 *   <li>A file that cannot be loaded (YAML syntax, missing apiVersion/kind/metadata.name, unknown
 *       kind, larger than {@value #MAX_FILE_BYTES} bytes) is all-or-nothing: a WARN naming
 *       {@code file:line}, {@link #errors()} grows, {@link #problems()} lists it, and the file's last
 *       good objects stay until it is fixed or deleted.
 *   <li>Two definitions of the same object: the one in the file whose name sorts last wins (the order
 *       {@code kubectl apply -f DIR} applies files, so the same object wins there); within a file the
 *       later document wins. Each new conflict is a WARN and counts as an error.
 *   <li>Objects without a namespace get {@code default}.
 *   <li>Revision hint: the newest modification time, in epoch milliseconds, of the directory and its
 *       manifest files. Editing a file moves its mtime; creating, deleting or renaming one moves the
 *       directory's. So revisions grow across control-plane restarts without any state on disk, as
 *       long as the wall clock does not go backwards.
 *   <li>A kind changed by a rescan is replaced in the store as a whole ({@link
 *       ResourceStore#replaceKind}): one revision per kind per rescan.
 * </ul>
 *
 * <p>Threading: scans run one at a time (this object's monitor), on the caller of {@link #start()}
 * and then on the injected scheduler; the watch thread only schedules. Thread-safe.
 */
public final class FileSource implements Source {

  private static final Logger log = LoggerFactory.getLogger(FileSource.class);

  /** Quiet time after a file event before the rescan: an editor's write-and-rename burst is one change. */
  public static final Duration DEFAULT_DEBOUNCE = Duration.ofMillis(50);

  /** Larger files are refused (YAML parsers cap documents at a few MB anyway). */
  public static final int MAX_FILE_BYTES = 2 * 1024 * 1024;

  private final Path directory;
  private final ResourceStore store;
  private final TimeSource time;
  private final Duration debounce;
  private final boolean watch;
  private final AtomicLong errors = new AtomicLong();
  private final Object debounceLock = new Object();

  // Guarded by this.
  private Map<Path, FileState> files = Map.of();
  private Map<ResourceKey, SourceObject> applied = Map.of();
  private Set<String> conflicts = Set.of();
  private DirectoryWatcher watcher;
  private boolean started;
  private volatile boolean closed;

  // Guarded by debounceLock.
  private ScheduledFuture<?> pendingScan;

  private volatile boolean synced;
  private volatile List<String> problems = List.of();

  /** A source on {@code directory} with the default debounce, following changes after start. */
  public FileSource(Path directory, ResourceStore store, TimeSource time) {
    this(directory, store, time, DEFAULT_DEBOUNCE, true);
  }

  /** {@code watch = false}: no watch thread; tests call {@link #rescan()} or {@link #onFileEvent()}. */
  FileSource(Path directory, ResourceStore store, TimeSource time, Duration debounce, boolean watch) {
    this.directory = Objects.requireNonNull(directory, "directory").toAbsolutePath().normalize();
    this.store = Objects.requireNonNull(store, "store");
    this.time = Objects.requireNonNull(time, "time");
    this.debounce = Objects.requireNonNull(debounce, "debounce");
    if (debounce.isNegative()) {
      throw new IllegalArgumentException("debounce: " + debounce + " (expected: >= 0)");
    }
    this.watch = watch;
  }

  /**
   * Loads the directory and starts following it.
   *
   * @throws IllegalArgumentException if the path is not a directory
   * @throws UncheckedIOException if it cannot be watched
   */
  @Override
  public synchronized void start() {
    if (started) {
      throw new IllegalStateException(describe() + " already started");
    }
    if (!Files.isDirectory(directory)) {
      throw new IllegalArgumentException("directory: " + directory + " (expected: an existing directory)");
    }
    started = true;
    if (watch) {
      // Watch before the first scan so that nothing written in between is missed.
      try {
        watcher = new DirectoryWatcher(directory, this::onFileEvent);
      } catch (IOException e) {
        throw new UncheckedIOException("cannot watch " + directory, e);
      }
      watcher.start();
    }
    rescan();
    log.info("file source started: {} ({} objects from {} files, {} problems)",
        directory, applied.size(), files.size(), problems.size());
  }

  @Override
  public boolean isSynced() {
    return synced;
  }

  @Override
  public String describe() {
    return "files:" + directory;
  }

  /** Problems found so far: unloadable file versions, new conflicts, unreadable directory. */
  public long errors() {
    return errors.get();
  }

  /** The current problems, one line each ({@code file:line: what}), empty when all is well. */
  public List<String> problems() {
    return problems;
  }

  @Override
  public void close() {
    DirectoryWatcher w;
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      w = watcher;
    }
    synchronized (debounceLock) {
      if (pendingScan != null) {
        pendingScan.cancel(false);
        pendingScan = null;
      }
    }
    if (w != null) {
      w.close();
    }
    log.info("file source closed: {}", directory);
  }

  /** Something changed in the directory: rescan after the debounce, once for a whole burst. */
  void onFileEvent() {
    synchronized (debounceLock) {
      if (pendingScan != null || closed) {
        return;
      }
      pendingScan = time.scheduler().schedule(this::debouncedRescan, debounce.toNanos(), TimeUnit.NANOSECONDS);
    }
  }

  private void debouncedRescan() {
    synchronized (debounceLock) {
      pendingScan = null; // events from now on schedule another scan
    }
    try {
      rescan();
    } catch (RuntimeException e) {
      errors.incrementAndGet();
      log.warn("file source: rescan of {} failed", directory, e);
    }
  }

  /** Reads the directory and brings the store in line with it. */
  synchronized void rescan() {
    if (closed) {
      return;
    }
    List<Path> paths;
    long hint;
    try {
      hint = Files.getLastModifiedTime(directory).toMillis();
      try (Stream<Path> s = Files.list(directory)) {
        paths = s.filter(FileSource::isManifest).sorted().toList();
      }
    } catch (IOException e) {
      errors.incrementAndGet();
      log.warn("file source: cannot list {}; keeping the last state", directory, e);
      return;
    }

    Map<Path, FileState> next = new LinkedHashMap<>();
    for (Path path : paths) {
      FileState prev = files.get(path);
      FileState state;
      try {
        state = read(path, prev);
      } catch (NoSuchFileException e) {
        continue; // deleted between listing and reading: the next event rescans
      } catch (IOException e) {
        // no digest: the next scan reads the file again
        state = failed(path, prev, "unreadable", path.getFileName() + ": cannot read: " + e);
      }
      hint = Math.max(hint, state.mtimeMillis());
      next.put(path, state);
    }
    for (Path gone : files.keySet()) {
      if (!next.containsKey(gone)) {
        log.info("file source: {} removed", gone.getFileName());
      }
    }
    files = next;
    apply(hint);
    synced = true;
  }

  private static boolean isManifest(Path p) {
    String name = p.getFileName().toString();
    return !name.startsWith(".") && (name.endsWith(".yaml") || name.endsWith(".yml")) && Files.isRegularFile(p);
  }

  /** Reads one file; unchanged content keeps the previous state (and its error is not counted again). */
  private FileState read(Path path, FileState prev) throws IOException {
    BasicFileAttributes attrs = Files.readAttributes(path, BasicFileAttributes.class);
    long mtime = attrs.lastModifiedTime().toMillis();
    String name = path.getFileName().toString();
    if (attrs.size() > MAX_FILE_BYTES) {
      String digest = "size:" + attrs.size() + "@" + mtime;
      if (prev != null && prev.digest().equals(digest)) {
        return prev;
      }
      return failed(path, prev, digest,
          name + ": " + attrs.size() + " bytes (expected: at most " + MAX_FILE_BYTES + ")").withMtime(mtime);
    }
    byte[] content = Files.readAllBytes(path);
    String digest = sha256(content);
    if (prev != null && prev.digest().equals(digest)) {
      return prev.withMtime(mtime);
    }
    try {
      List<LocatedObject> objects = ManifestParser.parse(name, content, name + "@" + digest.substring(0, 12));
      if (prev == null) {
        log.info("file source: {} loaded ({} objects)", name, objects.size());
      } else {
        log.info("file source: {} changed ({} objects)", name, objects.size());
      }
      return new FileState(digest, mtime, objects, null);
    } catch (ManifestException e) {
      return failed(path, prev, digest, e.getMessage()).withMtime(mtime);
    }
  }

  private FileState failed(Path path, FileState prev, String digest, String problem) {
    errors.incrementAndGet();
    List<LocatedObject> kept = prev == null ? List.of() : prev.objects();
    log.warn("file source: {}; keeping the last good version of {} ({} objects)", problem, path.getFileName(), kept.size());
    return new FileState(digest, prev == null ? 0 : prev.mtimeMillis(), kept, problem);
  }

  /** Merges the files' objects (later file wins) and replaces every kind that changed. */
  private void apply(long hint) {
    Map<ResourceKey, LocatedObject> desired = new TreeMap<>();
    Set<String> nowConflicts = new LinkedHashSet<>();
    List<String> nowProblems = new ArrayList<>();
    for (FileState f : files.values()) {
      if (f.problem() != null) {
        nowProblems.add(f.problem());
      }
      for (LocatedObject o : f.objects()) {
        LocatedObject loser = desired.put(o.object().key(), o);
        if (loser != null) {
          nowConflicts.add(o.object().key() + " is defined in " + loser.location() + " and " + o.location()
              + "; " + o.location() + " wins");
        }
      }
    }
    for (String c : nowConflicts) {
      if (!conflicts.contains(c)) {
        errors.incrementAndGet();
        log.warn("file source: conflict: {}", c);
      }
    }
    conflicts = nowConflicts;
    nowProblems.addAll(nowConflicts);
    problems = List.copyOf(nowProblems);

    Map<ResourceKey, SourceObject> nextApplied = new LinkedHashMap<>();
    desired.forEach((k, o) -> nextApplied.put(k, o.object()));
    for (String kind : Kinds.ALL) {
      List<SourceObject> want = ofKind(nextApplied, kind);
      if (synced && sameBodies(want, ofKind(applied, kind))) {
        continue;
      }
      store.replaceKind(kind, want, hint);
    }
    applied = nextApplied;
  }

  private static List<SourceObject> ofKind(Map<ResourceKey, SourceObject> objects, String kind) {
    List<SourceObject> out = new ArrayList<>();
    for (SourceObject o : objects.values()) {
      if (o.key().kind().equals(kind)) {
        out.add(o);
      }
    }
    return out;
  }

  private static boolean sameBodies(List<SourceObject> a, List<SourceObject> b) {
    if (a.size() != b.size()) {
      return false;
    }
    for (int i = 0; i < a.size(); i++) {
      if (!a.get(i).key().equals(b.get(i).key()) || !a.get(i).body().equals(b.get(i).body())) {
        return false;
      }
    }
    return true;
  }

  private static String sha256(byte[] content) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(content));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required of every JDK", e);
    }
  }

  /** What one file contributed: its last good objects, and its current problem if any. */
  private record FileState(String digest, long mtimeMillis, List<LocatedObject> objects, String problem) {
    FileState withMtime(long mtime) {
      return new FileState(digest, mtime, objects, problem);
    }
  }
}
