package dev.portage.hub.cache;

import dev.portage.hub.codec.Encoding;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.FileVisitResult;
import java.nio.file.LinkOption;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The hub's on-disk object cache, in YurtHub's layout {@code
 * {component}/{resource}[.{version}.{group}]/{namespace}/{name}} under one root directory.
 *
 * <ul>
 *   <li>Writes are atomic: a temp file in the same directory, fsync, rename. A failed write (a full
 *       disk) deletes its temp file and leaves the previous version in place; temp files left by a
 *       crash are removed when the cache opens.
 *   <li>A write never replaces a fresher object (resourceVersion compared as a number).
 *   <li>Every file carries its encoding, length and CRC32; a truncated or corrupt file is logged,
 *       counted and treated as absent, never served. A file larger than anything the hub writes
 *       ({@link #MAX_BODY_BYTES}), or one that is not a regular file, is not even read.
 *   <li>Every name is encoded into a single safe path segment: no key can reach outside the root.
 * </ul>
 *
 * <p>Thread-safe: writes and deletes of one key are serialised by a striped lock; reads take no lock
 * (a rename is atomic, so a reader sees the old or the new file). All methods do blocking file I/O:
 * never call them on an event loop.
 */
public final class DiskCache {

  private static final Logger log = LoggerFactory.getLogger(DiskCache.class);

  /** Prefix of temp files; encoded names never start with ".", so these cannot clash with objects. */
  static final String TEMP_PREFIX = ".tmp-";

  /** Directory of discovery documents; encoded component names never start with ".". */
  static final String DISCOVERY_DIR = ".discovery";

  /** Metadata of the last list of a resource: kind, apiVersion and resourceVersion. */
  static final String LIST_META = ".list";

  private static final int STRIPES = 64;

  /**
   * The largest object body the cache writes (and so the largest it reads: a bigger file was not
   * written by the hub and is not read).
   */
  public static final int MAX_BODY_BYTES = 64 * 1024 * 1024;

  private final Path root;
  private final FileWrites writes;
  private final ReentrantLock[] locks = new ReentrantLock[STRIPES];
  private final LongAdder corruptFiles = new LongAdder();
  private final LongAdder writeFailures = new LongAdder();
  private final AtomicLong generation = new AtomicLong();

  DiskCache(Path root, FileWrites writes) throws IOException {
    this.root = Objects.requireNonNull(root, "root").toAbsolutePath().normalize();
    this.writes = Objects.requireNonNull(writes, "writes");
    for (int i = 0; i < STRIPES; i++) {
      locks[i] = new ReentrantLock();
    }
    Files.createDirectories(this.root);
    removeTempFiles();
  }

  /**
   * Opens (creating if needed) the cache under {@code root} and removes temp files a previous run
   * left behind.
   *
   * @throws IOException if the directory cannot be created or read
   */
  public static DiskCache open(Path root) throws IOException {
    return new DiskCache(root, FileWrites.DIRECT);
  }

  /**
   * Like {@link #open(Path)}, with the step that writes a temp file replaced (tests simulate a full
   * disk with it).
   */
  public static DiskCache open(Path root, FileWrites writes) throws IOException {
    return new DiskCache(root, writes);
  }

  /** What {@link #put} did. */
  public enum WriteResult {
    /** The object was written. */
    WRITTEN,
    /** The cache already held this resourceVersion; nothing was written. */
    UNCHANGED,
    /** The cache holds a fresher object; nothing was written. */
    STALE,
    /** The write failed (logged and counted); the previous version, if any, is still there. */
    FAILED
  }

  /**
   * Metadata of the last list of a resource, kept so an empty list can still be answered with the
   * right kind.
   */
  public record ListMeta(String kind, String apiVersion, String resourceVersion) {
    public ListMeta {
      Objects.requireNonNull(kind, "kind");
      Objects.requireNonNull(apiVersion, "apiVersion");
      Objects.requireNonNull(resourceVersion, "resourceVersion");
    }
  }

  /** One object read back from the cache, in the encoding it was cached in. */
  public record Entry(CacheKey key, String resourceVersion, Encoding encoding, byte[] body) {}

  public Path root() {
    return root;
  }

  /** The cached object, or empty when it is absent, unreadable or corrupt. */
  public Optional<Entry> get(CacheKey key) {
    return read(path(key)).map(c -> new Entry(key, c.resourceVersion(), c.encoding(), c.body()));
  }

  /**
   * Stores {@code json} (one JSON object) under {@code key} unless the cache holds a fresher one.
   *
   * @param resourceVersion the object's {@code metadata.resourceVersion}; "" when unknown
   */
  public WriteResult put(CacheKey key, byte[] json, String resourceVersion) {
    Objects.requireNonNull(json, "json");
    return put(key, resourceVersion, Encoding.JSON, () -> json);
  }

  /**
   * Stores {@code body} (one object in {@code encoding}: JSON, or a protobuf body) under {@code key}
   * unless the cache holds a fresher one; the object's bytes are only made when they are written
   * (not when the cache already holds this or a fresher resourceVersion). A body over {@link
   * #MAX_BODY_BYTES} is not stored.
   */
  public WriteResult put(CacheKey key, String resourceVersion, Encoding encoding,
      Supplier<byte[]> body) {
    Objects.requireNonNull(body, "body");
    Objects.requireNonNull(encoding, "encoding");
    String rv = checkResourceVersion(resourceVersion);
    Path file = path(key);
    ReentrantLock lock = lockFor(file);
    lock.lock();
    try {
      Optional<CacheFile.Contents> held = read(file);
      if (held.isPresent()) {
        String heldRv = held.get().resourceVersion();
        if (ResourceVersions.isOlder(rv, heldRv)) {
          log.debug("not caching {} at resourceVersion {}: holding {}", key, rv, heldRv);
          return WriteResult.STALE;
        }
        if (!rv.isEmpty() && rv.equals(heldRv)) {
          return WriteResult.UNCHANGED;
        }
      }
      byte[] bytes = body.get();
      if (bytes.length > MAX_BODY_BYTES) {
        log.warn("not caching {}: {} bytes, over the {} byte limit", key, bytes.length,
            MAX_BODY_BYTES);
        return WriteResult.FAILED;
      }
      return write(file, CacheFile.encode(rv, encoding, bytes), key.toString());
    } finally {
      lock.unlock();
    }
  }

  /** Removes the object; returns whether a file was removed. */
  public boolean delete(CacheKey key) {
    Path file = path(key);
    ReentrantLock lock = lockFor(file);
    lock.lock();
    try {
      boolean deleted = Files.deleteIfExists(file);
      if (deleted) {
        generation.incrementAndGet();
      }
      return deleted;
    } catch (IOException e) {
      log.warn("cannot delete cached {}", key, e);
      return false;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Every readable object of a resource for one component, in name order per namespace.
   *
   * @param namespace a namespace, or "" for every namespace and the cluster-scoped objects
   */
  public List<Entry> list(ResourceRef ref, String namespace) {
    Path dir = resourcePath(ref);
    List<Entry> out = new ArrayList<>();
    if (!namespace.isEmpty()) {
      readDir(dir.resolve(PathSegments.encode(namespace)), ref, namespace, out);
      return out;
    }
    for (Path child : children(dir)) {
      if (Files.isDirectory(child, LinkOption.NOFOLLOW_LINKS)) { // a linked directory is not ours
        readDir(child, ref, PathSegments.decode(child.getFileName().toString()), out);
      } else {
        readObject(child, ref, "", out);
      }
    }
    return out;
  }

  /**
   * After a complete list, removes the objects of its scope that it did not contain, unless they are
   * newer than the list (written by a watch after the list was taken).
   *
   * @param keep names of the objects the list contained, as {@code namespace/name} ("/name" when
   *     cluster-scoped)
   */
  public int retainOnly(ResourceRef ref, String namespace, Set<String> keep, String listRv) {
    int removed = 0;
    for (Entry e : list(ref, namespace)) {
      if (keep.contains(e.key().namespace() + "/" + e.key().name())) {
        continue;
      }
      if (!listRv.isEmpty() && !ResourceVersions.notNewer(e.resourceVersion(), listRv)) {
        continue;
      }
      if (delete(e.key())) {
        removed++;
      }
    }
    return removed;
  }

  /** Records the kind, apiVersion and resourceVersion of the last list of a resource. */
  public WriteResult putListMeta(ResourceRef ref, ListMeta meta) {
    Path file = resourcePath(ref).resolve(LIST_META);
    byte[] body =
        (meta.kind() + "\n" + meta.apiVersion() + "\n").getBytes(StandardCharsets.UTF_8);
    ReentrantLock lock = lockFor(file);
    lock.lock();
    try {
      return write(
          file,
          CacheFile.encode(checkResourceVersion(meta.resourceVersion()), Encoding.JSON, body),
          ref + " list");
    } finally {
      lock.unlock();
    }
  }

  /** The metadata of the last list of a resource, if one was cached. */
  public Optional<ListMeta> listMeta(ResourceRef ref) {
    return read(resourcePath(ref).resolve(LIST_META))
        .flatMap(
            c -> {
              String[] lines = new String(c.body(), StandardCharsets.UTF_8).split("\n");
              return lines.length == 2
                  ? Optional.of(new ListMeta(lines[0], lines[1], c.resourceVersion()))
                  : Optional.empty();
            });
  }

  /**
   * Stores a discovery document under {@code name} ({@link DiscoveryDocument#name}) unless the same
   * bytes are already there.
   */
  public WriteResult putDiscovery(String name, DiscoveryDocument doc) {
    Path file = discoveryPath(name);
    byte[] body = doc.encode();
    if (body.length > MAX_BODY_BYTES) {
      return WriteResult.FAILED;
    }
    ReentrantLock lock = lockFor(file);
    lock.lock();
    try {
      Optional<CacheFile.Contents> held = read(file);
      if (held.isPresent() && Arrays.equals(held.get().body(), body)) {
        return WriteResult.UNCHANGED;
      }
      return write(file, CacheFile.encode("", Encoding.JSON, body), "discovery " + name);
    } finally {
      lock.unlock();
    }
  }

  /** The discovery document stored under {@code name}, if any (and not corrupt). */
  public Optional<DiscoveryDocument> discovery(String name) {
    return read(discoveryPath(name)).map(c -> DiscoveryDocument.decode(c.body()));
  }

  private Path discoveryPath(String name) {
    return root.resolve(DISCOVERY_DIR).resolve(PathSegments.encode(name));
  }

  /** Components with a cache directory. */
  public List<String> components() {
    List<String> out = new ArrayList<>();
    for (Path p : children(root)) {
      if (Files.isDirectory(p) && !p.getFileName().toString().startsWith(".")) {
        out.add(PathSegments.decode(p.getFileName().toString()));
      }
    }
    return out;
  }

  /** Bytes on disk under one component's directory (walks it: for metrics scrapes). */
  public long sizeBytes(String component) {
    long[] total = {0};
    try {
      Files.walkFileTree(
          root.resolve(PathSegments.encode(component)),
          new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
              total[0] += attrs.size();
              return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFileFailed(Path file, IOException exc) {
              return FileVisitResult.CONTINUE;
            }
          });
    } catch (IOException e) {
      log.debug("cannot size cache of {}", component, e);
    }
    return total[0];
  }

  /**
   * A number that changes whenever this cache writes or deletes a file: answers built from the cache
   * at one generation are still right while it holds. (Files changed behind the cache's back are
   * not seen.)
   */
  public long generation() {
    return generation.get();
  }

  /** Files found truncated or corrupt since the cache opened. */
  public long corruptFiles() {
    return corruptFiles.sum();
  }

  /** Writes that failed (full disk, I/O error) since the cache opened. */
  public long writeFailures() {
    return writeFailures.sum();
  }

  /** The file of {@code key}; always inside {@link #root()}. */
  Path path(CacheKey key) {
    Path p =
        root.resolve(PathSegments.encode(key.component()))
            .resolve(PathSegments.encode(key.resourceDir()));
    if (!key.namespace().isEmpty()) {
      p = p.resolve(PathSegments.encode(key.namespace()));
    }
    p = p.resolve(PathSegments.encode(key.name()));
    if (!p.normalize().startsWith(root)) {
      // Unreachable with the encoding above; kept as the last line of defence against traversal.
      throw new IllegalArgumentException("key: " + key + " (expected: a path inside the cache)");
    }
    return p;
  }

  private Path resourcePath(ResourceRef ref) {
    return root.resolve(PathSegments.encode(ref.component()))
        .resolve(PathSegments.encode(ref.resourceDir()));
  }

  private WriteResult write(Path file, byte[] contents, String what) {
    Path dir = file.getParent();
    Path temp = null;
    try {
      Files.createDirectories(dir);
      temp = Files.createTempFile(dir, TEMP_PREFIX, "");
      try (FileChannel ch = FileChannel.open(temp, StandardOpenOption.WRITE)) {
        writes.writeFully(ch, ByteBuffer.wrap(contents));
        ch.force(true);
      }
      Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      temp = null;
      generation.incrementAndGet();
      syncDirectory(dir);
      return WriteResult.WRITTEN;
    } catch (IOException | RuntimeException e) {
      writeFailures.increment();
      log.warn("cannot cache {} ({} bytes); keeping the previous version: {}", what,
          contents.length, e.toString());
      return WriteResult.FAILED;
    } finally {
      if (temp != null) {
        try {
          Files.deleteIfExists(temp);
        } catch (IOException e) {
          log.warn("cannot remove temp file {}", temp, e);
        }
      }
    }
  }

  /** Makes the rename durable; best effort (not every file system can sync a directory). */
  private static void syncDirectory(Path dir) {
    try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
      ch.force(true);
    } catch (IOException | RuntimeException e) {
      log.trace("cannot sync directory {}", dir, e);
    }
  }

  private Optional<CacheFile.Contents> read(Path file) {
    try {
      return Optional.of(CacheFile.read(file, MAX_BODY_BYTES));
    } catch (NoSuchFileException e) {
      return Optional.empty();
    } catch (IOException e) {
      log.warn("cannot read cache file {}: {}", file, e.toString());
      return Optional.empty();
    } catch (CacheFile.CorruptCacheFileException e) {
      corruptFiles.increment();
      log.warn("skipping corrupt cache file {}: {}", file, e.getMessage());
      return Optional.empty();
    }
  }

  private void readDir(Path dir, ResourceRef ref, String ns, List<Entry> out) {
    for (Path file : children(dir)) {
      // Anything but a directory is read, so a planted link, FIFO or device is counted as corrupt.
      if (!Files.isDirectory(file, LinkOption.NOFOLLOW_LINKS)) {
        readObject(file, ref, ns, out);
      }
    }
  }

  private void readObject(Path file, ResourceRef ref, String ns, List<Entry> out) {
    String fileName = file.getFileName().toString();
    if (fileName.startsWith(".")) {
      return; // temp files and list metadata
    }
    CacheKey key = ref.key(ns, PathSegments.decode(fileName));
    read(file).ifPresent(c -> out.add(new Entry(key, c.resourceVersion(), c.encoding(), c.body())));
  }

  private static List<Path> children(Path dir) {
    List<Path> out = new ArrayList<>();
    try (DirectoryStream<Path> stream = Files.newDirectoryStream(dir)) {
      for (Path p : stream) {
        out.add(p);
      }
    } catch (NoSuchFileException e) {
      return out;
    } catch (IOException e) {
      log.warn("cannot list cache directory {}: {}", dir, e.toString());
    }
    out.sort(null);
    return out;
  }

  private void removeTempFiles() throws IOException {
    int[] removed = {0};
    Files.walkFileTree(
        root,
        new SimpleFileVisitor<>() {
          @Override
          public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
            if (file.getFileName().toString().startsWith(TEMP_PREFIX)) {
              Files.deleteIfExists(file);
              removed[0]++;
            }
            return FileVisitResult.CONTINUE;
          }
        });
    if (removed[0] > 0) {
      log.info("removed {} temp files left in cache {}", removed[0], root);
    }
  }

  private ReentrantLock lockFor(Path file) {
    return locks[Math.floorMod(file.hashCode(), STRIPES)];
  }

  private static String checkResourceVersion(String rv) {
    Objects.requireNonNull(rv, "resourceVersion");
    for (int i = 0; i < rv.length(); i++) {
      char c = rv.charAt(i);
      if (c <= ' ' || c > '~') {
        throw new IllegalArgumentException(
            "resourceVersion: \"" + rv + "\" (expected: printable ASCII, no spaces)");
      }
    }
    return rv;
  }
}
