package dev.portage.hub.cache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.portage.hub.codec.Encoding;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

class DiskCacheTest {

  private static final ResourceRef PODS = new ResourceRef("kubelet", "pods", "v1", "");

  @TempDir Path dir;

  private static CacheKey pod(String ns, String name) {
    return new CacheKey("kubelet", "pods", "v1", "", ns, name);
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void storesInYurtHubLayoutAndSurvivesRestart() throws IOException {
    DiskCache cache = DiskCache.open(dir);
    assertThat(cache.put(pod("default", "web-0"), bytes("{\"a\":1}"), "10"))
        .isEqualTo(DiskCache.WriteResult.WRITTEN);
    CacheKey lease = new CacheKey("kubelet", "leases", "v1", "coordination.k8s.io", "kube-node-lease", "n1");
    cache.put(lease, bytes("{}"), "11");
    CacheKey node = new CacheKey("kubelet", "nodes", "v1", "", "", "n1");
    cache.put(node, bytes("{}"), "12");

    assertThat(dir.resolve("kubelet/pods/default/web-0")).isRegularFile();
    assertThat(dir.resolve("kubelet/leases.v1.coordination.k8s.io/kube-node-lease/n1")).isRegularFile();
    assertThat(dir.resolve("kubelet/nodes/n1")).isRegularFile();

    DiskCache reopened = DiskCache.open(dir);
    assertThat(reopened.get(pod("default", "web-0")).orElseThrow().body()).isEqualTo(bytes("{\"a\":1}"));
    assertThat(reopened.get(pod("default", "web-0")).orElseThrow().resourceVersion()).isEqualTo("10");
    assertThat(reopened.get(pod("default", "missing"))).isEmpty();
    assertThat(reopened.components()).containsExactly("kubelet");
  }

  @Test
  void neverReplacesAFresherObject() throws IOException {
    DiskCache cache = DiskCache.open(dir);
    cache.put(pod("ns", "p"), bytes("{\"v\":20}"), "20");
    assertThat(cache.put(pod("ns", "p"), bytes("{\"v\":9}"), "9")).isEqualTo(DiskCache.WriteResult.STALE);
    assertThat(cache.put(pod("ns", "p"), bytes("{\"v\":20}"), "20")).isEqualTo(DiskCache.WriteResult.UNCHANGED);
    assertThat(cache.put(pod("ns", "p"), bytes("{\"v\":100}"), "100")).isEqualTo(DiskCache.WriteResult.WRITTEN);
    assertThat(new String(cache.get(pod("ns", "p")).orElseThrow().body(), StandardCharsets.UTF_8))
        .isEqualTo("{\"v\":100}");
  }

  @Test
  void truncatedAndCorruptFilesAreSkippedCountedAndNeverServed() throws IOException {
    DiskCache cache = DiskCache.open(dir);
    cache.put(pod("ns", "truncated"), bytes("{\"metadata\":{\"name\":\"truncated\"}}"), "1");
    cache.put(pod("ns", "flipped"), bytes("{\"metadata\":{\"name\":\"flipped\"}}"), "1");
    cache.put(pod("ns", "good"), bytes("{\"metadata\":{\"name\":\"good\"}}"), "1");
    Path truncated = cache.path(pod("ns", "truncated"));
    byte[] t = Files.readAllBytes(truncated);
    Files.write(truncated, Arrays.copyOf(t, t.length - 5));
    Path flipped = cache.path(pod("ns", "flipped"));
    byte[] f = Files.readAllBytes(flipped);
    f[f.length - 3] ^= 0x20;
    Files.write(flipped, f);
    Files.writeString(cache.path(pod("ns", "garbage")), "not a cache file at all");
    Files.write(cache.path(pod("ns", "empty")), new byte[0]);

    assertThat(cache.get(pod("ns", "truncated"))).isEmpty();
    assertThat(cache.get(pod("ns", "flipped"))).isEmpty();
    assertThat(cache.list(PODS, "ns"))
        .extracting(e -> e.key().name())
        .containsExactly("good");
    assertThat(cache.corruptFiles()).isEqualTo(6);

    // A fresh write replaces a corrupt file.
    assertThat(cache.put(pod("ns", "truncated"), bytes("{}"), "2")).isEqualTo(DiskCache.WriteResult.WRITTEN);
    assertThat(cache.get(pod("ns", "truncated"))).isPresent();
  }

  @Test
  @Timeout(value = 30, unit = TimeUnit.SECONDS)
  void filesTheHubNeverWroteAreAbsentCountedAndNotReadIntoMemory() throws Exception {
    DiskCache cache = DiskCache.open(dir);
    cache.put(pod("ns", "good"), bytes("{\"metadata\":{\"name\":\"good\"}}"), "1");
    // 400 MB (sparse) behind a header that promises all of it: today's readAllBytes ran out of
    // memory here; it is refused on its size, unread.
    Path huge = cache.path(pod("ns", "huge"));
    try (RandomAccessFile f = new RandomAccessFile(huge.toFile(), "rw")) {
      long body = 400L * 1024 * 1024;
      f.write(("PCACHE2 json " + body + " 0 1\n").getBytes(StandardCharsets.US_ASCII));
      f.setLength(f.getFilePointer() + body);
    }
    // A header promising more than the hub ever writes, on a small file.
    Files.writeString(cache.path(pod("ns", "promise")), "PCACHE2 json 999999999999 0 1\n{}");
    Files.writeString(cache.path(pod("ns", "encoding")), "PCACHE2 yaml 2 0 1\n{}");
    Files.writeString(cache.path(pod("ns", "negative")), "PCACHE2 json -2 0 1\n{}");
    // Not regular files: a link to a good file (outside the hub's own writes) and a FIFO, whose
    // open would block a reader forever.
    Files.createSymbolicLink(cache.path(pod("ns", "link")), cache.path(pod("ns", "good")));
    Path fifo = cache.path(pod("ns", "fifo"));
    Process mkfifo = new ProcessBuilder("mkfifo", fifo.toString()).start();
    assertThat(mkfifo.waitFor()).as("mkfifo").isZero();

    for (String name : List.of("huge", "promise", "encoding", "negative", "link", "fifo")) {
      assertThat(cache.get(pod("ns", name))).as(name).isEmpty();
    }
    assertThat(cache.corruptFiles()).isEqualTo(6);
    assertThat(cache.list(PODS, "ns")).extracting(e -> e.key().name()).containsExactly("good");
    assertThat(cache.corruptFiles()).isEqualTo(12);
  }

  @Test
  void firstFormatFilesAreStillReadAndEncodingsKept() throws IOException {
    DiskCache cache = DiskCache.open(dir);
    byte[] json = bytes("{\"kind\":\"Pod\"}");
    java.util.zip.CRC32 crc = new java.util.zip.CRC32();
    crc.update(json);
    Path v1 = cache.path(pod("ns", "old"));
    Files.createDirectories(v1.getParent());
    Files.write(v1, concat(("PCACHE1 " + json.length + " " + Long.toHexString(crc.getValue())
        + " 7\n").getBytes(StandardCharsets.US_ASCII), json));
    DiskCache.Entry old = cache.get(pod("ns", "old")).orElseThrow();
    assertThat(old.encoding()).isEqualTo(Encoding.JSON);
    assertThat(old.resourceVersion()).isEqualTo("7");
    assertThat(old.body()).isEqualTo(json);

    byte[] proto = {0x6b, 0x38, 0x73, 0x00, 0x0a, 0x00};
    assertThat(cache.put(pod("ns", "pb"), "9", Encoding.PROTOBUF, () -> proto))
        .isEqualTo(DiskCache.WriteResult.WRITTEN);
    DiskCache.Entry pb = DiskCache.open(dir).get(pod("ns", "pb")).orElseThrow();
    assertThat(pb.encoding()).isEqualTo(Encoding.PROTOBUF);
    assertThat(pb.body()).isEqualTo(proto);
    assertThat(Files.readString(cache.path(pod("ns", "pb")), StandardCharsets.ISO_8859_1))
        .startsWith("PCACHE2 protobuf 6 ");
  }

  @Test
  void aBodyOverTheLimitIsNotWritten() throws IOException {
    DiskCache cache = DiskCache.open(dir);
    assertThat(cache.put(pod("ns", "big"), "1", Encoding.JSON,
        () -> new byte[DiskCache.MAX_BODY_BYTES + 1])).isEqualTo(DiskCache.WriteResult.FAILED);
    assertThat(cache.get(pod("ns", "big"))).isEmpty();
  }

  private static byte[] concat(byte[] a, byte[] b) {
    byte[] out = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }

  @Test
  void fullDiskWhileWritingKeepsThePreviousVersionAndLeavesNoTempFile() throws IOException {
    boolean[] full = {false};
    FileWrites failing =
        (channel, data) -> {
          if (full[0]) {
            // Half the bytes reach the disk, then ENOSPC.
            ByteBuffer half = data.slice(0, data.remaining() / 2);
            FileWrites.DIRECT.writeFully(channel, half);
            throw new IOException("No space left on device");
          }
          FileWrites.DIRECT.writeFully(channel, data);
        };
    DiskCache cache = new DiskCache(dir, failing);
    cache.put(pod("ns", "p"), bytes("{\"v\":1}"), "1");
    full[0] = true;

    assertThat(cache.put(pod("ns", "p"), bytes("{\"v\":2, \"padding\": \"xxxxxxxxxxxx\"}"), "2"))
        .isEqualTo(DiskCache.WriteResult.FAILED);
    assertThat(cache.put(pod("ns", "new"), bytes("{}"), "3")).isEqualTo(DiskCache.WriteResult.FAILED);

    assertThat(cache.writeFailures()).isEqualTo(2);
    assertThat(new String(cache.get(pod("ns", "p")).orElseThrow().body(), StandardCharsets.UTF_8))
        .isEqualTo("{\"v\":1}");
    assertThat(cache.get(pod("ns", "new"))).isEmpty();
    assertThat(allFiles()).noneMatch(p -> p.getFileName().toString().startsWith(DiskCache.TEMP_PREFIX));
  }

  @Test
  void tempFilesLeftByACrashAreRemovedAtStartup() throws IOException {
    DiskCache.open(dir).put(pod("ns", "p"), bytes("{}"), "1");
    Path leftover = dir.resolve("kubelet/pods/ns/" + DiskCache.TEMP_PREFIX + "12345");
    Files.writeString(leftover, "half a wri");

    DiskCache reopened = DiskCache.open(dir);

    assertThat(leftover).doesNotExist();
    assertThat(reopened.get(pod("ns", "p"))).isPresent();
    assertThat(reopened.list(PODS, "")).hasSize(1);
  }

  @Test
  void namesWithDotsAndSlashesCannotLeaveTheCacheDirectory() throws IOException {
    Path root = dir.resolve("cache");
    DiskCache cache = DiskCache.open(root);
    List<String> evil = List.of("..", ".", "../../etc/passwd", "a/b", "/abs", "..%2F..", "", "ünï", ".hidden", ".tmp-x", ".list");
    for (String name : evil) {
      for (String ns : List.of("..", "a/../..", "")) {
        CacheKey key;
        if (name.isEmpty()) {
          assertThatThrownBy(() -> new CacheKey("kubelet", "pods", "v1", "", "ns", ""))
              .hasMessageContaining("name: \"\" (expected: non-empty)");
          continue;
        }
        // A resource is either namespaced or cluster-scoped, never both: "nodes" stands for the latter.
        key = new CacheKey("..", ns.isEmpty() ? "../nodes" : "../pods", "v1", "../x", ns, name);
        assertThat(cache.path(key).normalize()).startsWithRaw(root);
        assertThat(cache.put(key, bytes("{\"n\":\"" + name + "\"}"), "1"))
            .isEqualTo(DiskCache.WriteResult.WRITTEN);
        assertThat(cache.get(key)).isPresent();
      }
    }
    try (Stream<Path> all = Files.walk(dir)) {
      assertThat(all.filter(Files::isRegularFile)).allMatch(p -> p.startsWith(root));
    }
    // Every name reads back as itself, and the reserved names do not clash with the cache's files.
    assertThat(cache.list(new ResourceRef("..", "../pods", "v1", "../x"), ".."))
        .extracting(e -> e.key().name())
        .containsExactlyInAnyOrderElementsOf(evil.subList(0, evil.size()).stream().filter(n -> !n.isEmpty()).toList());
    CacheKey dotList = new CacheKey("kubelet", "pods", "v1", "", "", ".list");
    cache.put(dotList, bytes("{}"), "1");
    cache.putListMeta(PODS, new DiskCache.ListMeta("PodList", "v1", "5"));
    assertThat(cache.get(dotList)).isPresent();
    assertThat(cache.listMeta(PODS)).contains(new DiskCache.ListMeta("PodList", "v1", "5"));
    assertThat(cache.list(PODS, "")).extracting(e -> e.key().name()).containsExactly(".list");
  }

  @Test
  void storesObjectsOfTenMebibytes() throws IOException {
    DiskCache cache = DiskCache.open(dir);
    byte[] big = new byte[10 * 1024 * 1024];
    Arrays.fill(big, (byte) 'x');
    big[0] = '"';
    big[big.length - 1] = '"';
    assertThat(cache.put(pod("ns", "big"), big, "7")).isEqualTo(DiskCache.WriteResult.WRITTEN);
    assertThat(DiskCache.open(dir).get(pod("ns", "big")).orElseThrow().body()).isEqualTo(big);
  }

  @Test
  void retainOnlyRemovesUnlistedObjectsButNotNewerOnes() throws IOException {
    DiskCache cache = DiskCache.open(dir);
    cache.put(pod("a", "kept"), bytes("{}"), "5");
    cache.put(pod("a", "gone"), bytes("{}"), "6");
    cache.put(pod("b", "newer"), bytes("{}"), "50");
    cache.put(pod("b", "other-ns-gone"), bytes("{}"), "7");

    int removed = cache.retainOnly(PODS, "", Set.of("a/kept"), "10");

    assertThat(removed).isEqualTo(2);
    assertThat(cache.list(PODS, "")).extracting(e -> e.key().toString())
        .containsExactly("kubelet/pods/a/kept", "kubelet/pods/b/newer");
  }

  @Test
  void concurrentWritersOfOneKeyEndWithTheFreshestVersion() throws Exception {
    DiskCache cache = DiskCache.open(dir);
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<Future<?>> futures = new java.util.ArrayList<>();
      for (int t = 0; t < 4; t++) {
        int offset = t;
        futures.add(pool.submit(() -> {
          for (int i = 0; i < 50; i++) {
            int rv = i * 4 + offset + 1;
            cache.put(pod("ns", "p"), bytes("{\"rv\":" + rv + "}"), Integer.toString(rv));
          }
        }));
      }
      for (Future<?> f : futures) {
        f.get();
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(cache.get(pod("ns", "p")).orElseThrow().resourceVersion()).isEqualTo("200");
    assertThat(cache.corruptFiles()).isZero();
    assertThat(allFiles()).hasSize(1);
  }

  @Test
  void rejectsResourceVersionsThatWouldBreakTheHeader() throws IOException {
    DiskCache cache = DiskCache.open(dir);
    assertThatThrownBy(() -> cache.put(pod("ns", "p"), bytes("{}"), "1 2"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("expected: printable ASCII");
  }

  private List<Path> allFiles() throws IOException {
    try (Stream<Path> s = Files.walk(dir)) {
      return s.filter(Files::isRegularFile).toList();
    }
  }
}
