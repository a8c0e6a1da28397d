package dev.portage.control.source.files;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.portage.control.source.Kinds;
import dev.portage.control.store.Resource;
import dev.portage.control.store.ResourceKey;
import dev.portage.control.store.ResourceStore;
import dev.portage.control.store.StoreEvent;
import dev.portage.control.store.StoreListener;
import dev.portage.core.time.FakeClock;
import dev.portage.core.time.TimeSource;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FileSourceTest {

  private static final ResourceKey GRAY = new ResourceKey(Kinds.TAG_ROUTE, "shop", "gray");
  private static final FileTime T0 = FileTime.from(Instant.parse("2026-03-01T10:00:00Z"));

  @TempDir Path dir;

  private final FakeClock clock = new FakeClock();
  private final ResourceStore store = new ResourceStore();
  private final List<StoreEvent> events = new CopyOnWriteArrayList<>();
  private FileSource source;
  private ScheduledExecutorService realScheduler;

  @AfterEach
  void tearDown() {
    if (source != null) {
      source.close();
    }
    if (realScheduler != null) {
      realScheduler.shutdownNow();
    }
  }

  private FileSource startUnwatched() {
    source = new FileSource(dir, store, clock.timeSource(), FileSource.DEFAULT_DEBOUNCE, false);
    store.watch(Set.of(), Runnable::run, new StoreListener() {
      @Override
      public void onEvent(StoreEvent event) {
        events.add(event);
      }

      @Override
      public void onResync(long revision) {}
    });
    source.start();
    return source;
  }

  private Path write(String name, String yaml) throws IOException {
    return Files.writeString(dir.resolve(name), yaml, StandardCharsets.UTF_8);
  }

  /** Writes and stamps a modification time, so the test does not depend on clock resolution. */
  private Path write(String name, String yaml, FileTime mtime) throws IOException {
    Path p = write(name, yaml);
    Files.setLastModifiedTime(p, mtime);
    return p;
  }

  private static String tagRoute(String name, int priority) {
    return """
        apiVersion: dubbo.apache.org/v1alpha1
        kind: TagRoute
        metadata:
          name: %s
          namespace: shop
        spec:
          key: shop
          priority: %d
          tags:
            - name: gray
              addresses: ["10.0.0.1"]
        """.formatted(name, priority);
  }

  private Optional<Resource> stored(ResourceKey key) {
    return store.get(key);
  }

  private int priority() {
    return stored(GRAY).orElseThrow().spec().path("priority").asInt();
  }

  @Test
  void loadsMultiDocumentFilesAndListsAndIgnoresOtherFiles() throws IOException {
    write("rules.yaml", "---\n" + tagRoute("gray", 1) + """
        ---
        apiVersion: dubbo.apache.org/v1alpha1
        kind: ConditionRoute
        metadata:
          name: shop-conditions
        spec:
          key: shop
          conditions: ["method=get => region=east"]
        ---
        """);
    write("services.yml", """
        apiVersion: v1
        kind: List
        items:
          - apiVersion: v1
            kind: Service
            metadata: {name: fast, namespace: default}
            spec: {ports: [{name: http, port: 8080}]}
          - apiVersion: discovery.k8s.io/v1
            kind: EndpointSlice
            metadata:
              name: fast-1
              namespace: default
              labels: {kubernetes.io/service-name: fast}
            addressType: IPv4
            endpoints: [{addresses: ["127.0.0.1"]}]
            ports: [{name: http, port: 9101}]
        """);
    write(".hidden.yaml", "this: [is not loaded");
    write("notes.txt", "not a manifest");

    startUnwatched();

    assertThat(source.isSynced()).isTrue();
    assertThat(source.errors()).isZero();
    assertThat(source.problems()).isEmpty();
    assertThat(store.size()).isEqualTo(4);
    assertThat(priority()).isEqualTo(1);
    Resource cond = stored(new ResourceKey(Kinds.CONDITION_ROUTE, "default", "shop-conditions")).orElseThrow();
    assertThat(cond.body().path("metadata").path("namespace").asText())
        .as("no namespace means default, like kubectl").isEqualTo("default");
    assertThat(cond.sourceVersion()).startsWith("rules.yaml@");
    assertThat(stored(new ResourceKey(Kinds.ENDPOINT_SLICE, "default", "fast-1")).orElseThrow()
        .body().path("ports").get(0).path("port").asInt()).isEqualTo(9101);
    assertThat(source.describe()).isEqualTo("files:" + dir.toAbsolutePath().normalize());
  }

  @Test
  void editChangesTheRuleWithAGrowingRevisionAndOneEvent() throws IOException {
    write("rules.yaml", tagRoute("gray", 1), T0);
    startUnwatched();
    long before = stored(GRAY).orElseThrow().revision();
    assertThat(before).as("revision hint is the newest mtime").isGreaterThanOrEqualTo(T0.toMillis());
    events.clear();

    FileTime later = FileTime.from(T0.toInstant().plusSeconds(5));
    write("rules.yaml", tagRoute("gray", 7), later);
    source.rescan();

    assertThat(priority()).isEqualTo(7);
    Resource after = stored(GRAY).orElseThrow();
    assertThat(after.revision()).isGreaterThan(before).isGreaterThanOrEqualTo(later.toMillis());
    assertThat(events).singleElement().satisfies(e -> {
      assertThat(e.type()).isEqualTo(StoreEvent.Type.MODIFIED);
      assertThat(e.resource().key()).isEqualTo(GRAY);
    });

    // a rescan with nothing changed emits nothing
    source.rescan();
    assertThat(events).hasSize(1);
  }

  @Test
  void deletingAFileRemovesItsObjects() throws IOException {
    write("a.yaml", tagRoute("gray", 1));
    write("b.yaml", tagRoute("blue", 1));
    startUnwatched();
    events.clear();

    Files.delete(dir.resolve("a.yaml"));
    source.rescan();

    assertThat(stored(GRAY)).isEmpty();
    assertThat(store.list(Kinds.TAG_ROUTE).items()).extracting(r -> r.key().name()).containsExactly("blue");
    assertThat(events).singleElement().extracting(StoreEvent::type).isEqualTo(StoreEvent.Type.DELETED);
  }

  @Test
  void atomicRenameOverTheFileReplacesItsObjects() throws IOException {
    write("rules.yaml", tagRoute("gray", 1));
    startUnwatched();

    Path tmp = write(".rules.yaml.swp", tagRoute("gray", 3));
    source.rescan(); // the editor's temp file is hidden: ignored
    assertThat(priority()).isEqualTo(1);
    Files.move(tmp, dir.resolve("rules.yaml"), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    source.rescan();

    assertThat(priority()).isEqualTo(3);
    assertThat(source.errors()).isZero();
  }

  @Test
  void syntaxErrorKeepsTheLastGoodObjectsAndNamesFileAndLine() throws IOException {
    write("rules.yaml", tagRoute("gray", 1));
    startUnwatched();
    events.clear();

    write("rules.yaml", """
        apiVersion: dubbo.apache.org/v1alpha1
        kind: TagRoute
        metadata:
          name: gray
        spec: {priority: [5
        """);
    source.rescan();

    assertThat(priority()).as("last good version kept").isEqualTo(1);
    assertThat(events).isEmpty();
    assertThat(source.errors()).isEqualTo(1);
    assertThat(source.problems()).singleElement().asString()
        .matches("rules\\.yaml:[56]:\\d+: while parsing a flow sequence: expected .*");

    source.rescan(); // same broken content: not counted again
    assertThat(source.errors()).isEqualTo(1);

    write("rules.yaml", tagRoute("gray", 2));
    source.rescan();
    assertThat(priority()).isEqualTo(2);
    assertThat(source.problems()).isEmpty();
    assertThat(source.errors()).isEqualTo(1);
  }

  @Test
  void documentWithoutNameIsReportedWithItsLineAndTheWholeFileIsRefused() throws IOException {
    write("rules.yaml", tagRoute("gray", 1) + """
        ---
        apiVersion: dubbo.apache.org/v1alpha1
        kind: DynamicConfig
        metadata:
          namespace: shop
        spec: {key: shop}
        """);
    startUnwatched();

    assertThat(stored(GRAY)).as("all or nothing per file").isEmpty();
    // the first document spans 11 lines, the separator is line 12: the bad one starts at 13
    assertThat(source.problems()).containsExactly(
        "rules.yaml:13: metadata.name: missing in dubbo.apache.org/v1alpha1/DynamicConfig");
    assertThat(source.errors()).isEqualTo(1);
    assertThat(source.isSynced()).isTrue();
  }

  @Test
  void missingApiVersionOrKindAndNonObjectsAreReported() throws IOException {
    write("a.yaml", "kind: TagRoute\nmetadata: {name: x}\n");
    write("b.yaml", "apiVersion: v1\nmetadata: {name: x}\n");
    write("c.yaml", "- just\n- a list\n");
    startUnwatched();

    assertThat(source.problems()).containsExactly(
        "a.yaml:1: apiVersion: missing (expected: e.g. dubbo.apache.org/v1alpha1)",
        "b.yaml:1: kind: missing (expected: e.g. TagRoute)",
        "c.yaml:1: expected a Kubernetes object (a mapping), got ARRAY");
    assertThat(source.errors()).isEqualTo(3);
    assertThat(store.size()).isZero();
  }

  private static final ResourceKey WEB_SLICE = new ResourceKey(Kinds.ENDPOINT_SLICE, "shop", "web-a");

  private static String slice(String address, String port) {
    return """
        apiVersion: discovery.k8s.io/v1
        kind: EndpointSlice
        metadata:
          name: web-a
          namespace: shop
          labels: {kubernetes.io/service-name: web}
        addressType: IPv4
        endpoints:
          - addresses: ["10.0.0.1"]
          - addresses:
              - "10.0.0.2"
              - %s
        ports:
          - {name: http, protocol: TCP, port: %s}
        """.formatted(address, port);
  }

  private String sliceAddresses() {
    return stored(WEB_SLICE).orElseThrow().body().path("endpoints").toString();
  }

  @Test
  void invalidEndpointAddressesAndPortsAreRefusedAtTheirLineAndTheLastGoodStateStays() throws IOException {
    write("web.yaml", slice("\"10.0.0.3\"", "8080"));
    startUnwatched();
    String good = sliceAddresses();
    assertThat(good).contains("10.0.0.3");

    write("web.yaml", slice("\"10.0.0.300\"", "8080"));
    source.rescan();
    assertThat(source.problems()).containsExactly("web.yaml:12: discovery.k8s.io/v1/EndpointSlice shop/web-a:"
        + " endpoints[1].addresses[1]: \"10.0.0.300\" (expected: an IPv4 address)");
    assertThat(sliceAddresses()).as("last good state").isEqualTo(good);

    write("web.yaml", slice("\"fe80::1\"", "8080"));
    source.rescan();
    assertThat(source.problems()).singleElement().asString()
        .isEqualTo("web.yaml:12: discovery.k8s.io/v1/EndpointSlice shop/web-a: endpoints[1].addresses[1]: \"fe80::1\""
            + " (expected: an IPv4 address)");

    write("web.yaml", slice("\"10.0.0.4\"", "70000"));
    source.rescan();
    assertThat(source.problems()).containsExactly("web.yaml:14: discovery.k8s.io/v1/EndpointSlice shop/web-a:"
        + " ports[0].port: 70000 (expected: 1..65535)");

    write("web.yaml", slice("\"10.0.0.4\"", "http"));
    source.rescan();
    assertThat(source.problems()).singleElement().asString().endsWith("ports[0].port: \"http\" (expected: 1..65535)");
    assertThat(sliceAddresses()).isEqualTo(good);
    assertThat(source.errors()).isEqualTo(4);

    write("web.yaml", slice("\"10.0.0.4\"", "8080"));
    source.rescan();
    assertThat(source.problems()).isEmpty();
    assertThat(sliceAddresses()).contains("10.0.0.4");
  }

  @Test
  void addressTypeServicePortsAndListItemsAreCheckedToo() throws IOException {
    write("a.yaml", """
        apiVersion: discovery.k8s.io/v1
        kind: EndpointSlice
        metadata: {name: s, namespace: shop}
        addressType: IPv5
        endpoints: [{addresses: ["10.0.0.1"]}]
        """);
    write("b.yaml", """
        apiVersion: v1
        kind: List
        items:
          - apiVersion: v1
            kind: Service
            metadata: {name: ok, namespace: shop}
            spec: {ports: [{port: 80, targetPort: http}]}
          - apiVersion: v1
            kind: Service
            metadata: {name: web, namespace: shop}
            spec:
              ports:
                - port: 80
                  targetPort: 0
        """);
    write("c.yaml", """
        apiVersion: discovery.k8s.io/v1
        kind: EndpointSlice
        metadata: {name: v6, namespace: shop}
        addressType: IPv6
        endpoints:
          - addresses: ["fd00::1"]
          - addresses: []
        """);
    write("d.yaml", """
        apiVersion: discovery.k8s.io/v1
        kind: EndpointSlice
        metadata: {name: names, namespace: shop}
        addressType: FQDN
        endpoints: [{addresses: ["db-0.db.shop.svc.cluster.local"]}]
        ports: [{port: 5432}]
        """);
    startUnwatched();

    assertThat(source.problems()).containsExactly(
        "a.yaml:4: discovery.k8s.io/v1/EndpointSlice shop/s: addressType: \"IPv5\" (expected: IPv4, IPv6 or FQDN)",
        "b.yaml:14: v1/Service shop/web: spec.ports[0].targetPort: 0 (expected: 1..65535 or a port name)",
        "c.yaml:7: discovery.k8s.io/v1/EndpointSlice shop/v6: endpoints[1].addresses: [] (expected: a list of at least one address)");
    assertThat(stored(new ResourceKey(Kinds.ENDPOINT_SLICE, "shop", "names"))).isPresent();
    assertThat(stored(new ResourceKey(Kinds.SERVICE, "shop", "ok"))).as("all or nothing per file").isEmpty();
  }

  @Test
  void unknownKindIsReported() throws IOException {
    write("rules.yaml", tagRoute("gray", 1));
    startUnwatched();
    write("rules.yaml", tagRoute("gray", 4) + """
        ---
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: web}
        """);
    source.rescan();

    assertThat(priority()).isEqualTo(1);
    assertThat(source.problems()).singleElement().asString()
        .startsWith("rules.yaml:13: unknown kind apps/v1/Deployment (expected one of [");
  }

  @Test
  void sameObjectInTwoFilesLastFileByNameWinsAndTheConflictIsReported() throws IOException {
    write("10-base.yaml", tagRoute("gray", 1));
    write("20-override.yaml", tagRoute("gray", 2));
    startUnwatched();

    assertThat(priority()).isEqualTo(2);
    assertThat(source.problems()).singleElement().asString()
        .contains("is defined in 10-base.yaml:1 and 20-override.yaml:1; 20-override.yaml:1 wins");
    assertThat(source.errors()).isEqualTo(1);
    source.rescan();
    assertThat(source.errors()).as("a standing conflict is counted once").isEqualTo(1);

    Files.delete(dir.resolve("20-override.yaml"));
    source.rescan();
    assertThat(priority()).as("the remaining definition takes over").isEqualTo(1);
    assertThat(source.problems()).isEmpty();
  }

  @Test
  void oversizedFileIsRefused() throws IOException {
    write("big.yaml", "# " + "x".repeat(FileSource.MAX_FILE_BYTES) + "\n");
    startUnwatched();
    assertThat(source.problems()).singleElement().asString()
        .isEqualTo("big.yaml: " + (FileSource.MAX_FILE_BYTES + 3) + " bytes (expected: at most "
            + FileSource.MAX_FILE_BYTES + ")");
  }

  @Test
  void revisionsSurviveARestartAndGrowAfterADeleteWhileStopped() throws IOException {
    write("a.yaml", tagRoute("gray", 1), T0);
    write("b.yaml", tagRoute("blue", 1), T0);
    Files.setLastModifiedTime(dir, T0);
    startUnwatched();
    long first = store.kindRevision(Kinds.TAG_ROUTE);
    assertThat(first).isEqualTo(T0.toMillis());
    source.close();

    ResourceStore restarted = new ResourceStore();
    try (FileSource again = new FileSource(dir, restarted, clock.timeSource(), Duration.ZERO, false)) {
      again.start();
      assertThat(restarted.kindRevision(Kinds.TAG_ROUTE)).isEqualTo(first);
    }

    Files.delete(dir.resolve("b.yaml")); // moves the directory's mtime to now
    ResourceStore third = new ResourceStore();
    try (FileSource again = new FileSource(dir, third, clock.timeSource(), Duration.ZERO, false)) {
      again.start();
      assertThat(third.kindRevision(Kinds.TAG_ROUTE)).isGreaterThan(first);
    }
  }

  @Test
  void fileEventsWithinTheDebounceAreOneRescan() throws IOException {
    write("rules.yaml", tagRoute("gray", 1));
    startUnwatched();
    events.clear();

    write("rules.yaml", tagRoute("gray", 2));
    source.onFileEvent();
    source.onFileEvent();
    write("rules.yaml", tagRoute("gray", 3));
    source.onFileEvent();
    assertThat(clock.pendingTasks()).isEqualTo(1);

    clock.advance(Duration.ofMillis(49));
    assertThat(priority()).isEqualTo(1);
    clock.advance(Duration.ofMillis(1));
    assertThat(priority()).isEqualTo(3);
    assertThat(events).hasSize(1);

    // after the scan a new event schedules a new one; close cancels it
    source.onFileEvent();
    assertThat(clock.pendingTasks()).isEqualTo(1);
    source.close();
    assertThat(clock.pendingTasks()).isZero();
  }

  @Test
  void quickstartExampleDirectoryLoadsWithoutErrors() {
    source = new FileSource(Path.of("src/main/resources/examples"), store, clock.timeSource(), Duration.ZERO, false);
    source.start();

    assertThat(source.problems()).isEmpty();
    assertThat(source.errors()).isZero();
    assertThat(store.list(Kinds.SERVICE).items()).extracting(r -> r.key().name())
        .containsExactly("fast", "medium", "slow", "web");
    assertThat(store.list(Kinds.ENDPOINT_SLICE).items())
        .extracting(r -> r.body().path("metadata").path("labels").path("kubernetes.io/service-name").asText()
            + "=" + r.body().path("endpoints").get(0).path("addresses").get(0).asText()
            + ":" + r.body().path("ports").get(0).path("port").asInt()
            + "/" + r.body().path("ports").get(0).path("name").asText())
        .containsExactly("fast=127.0.0.1:9101/http", "medium=127.0.0.1:9102/http", "slow=127.0.0.1:9103/http");
    assertThat(store.list(Kinds.TAG_ROUTE).items()).hasSize(1);
    assertThat(store.list(Kinds.CONDITION_ROUTE).items()).hasSize(1);
    assertThat(store.list(Kinds.DYNAMIC_CONFIG).items()).hasSize(1);

    Resource profile = stored(new ResourceKey(Kinds.SERVICE_PROFILE, "default", "web.default.svc.cluster.local"))
        .orElseThrow();
    var spec = profile.spec();
    assertThat(spec.path("routes")).hasSize(2);
    assertThat(spec.path("routes").get(0).path("condition").path("method").asText()).isEqualTo("GET");
    assertThat(spec.path("routes").get(0).path("condition").path("pathRegex").asText()).isEqualTo("/api/.*");
    assertThat(spec.path("routes").get(0).path("isRetryable").asBoolean()).isTrue();
    assertThat(spec.path("routes").get(0).path("timeout").asText()).isEqualTo("1s");
    assertThat(spec.path("routes").get(1).path("condition").path("method").asText()).isEqualTo("POST");
    assertThat(spec.path("routes").get(1).path("isRetryable").asBoolean()).isFalse();
    assertThat(spec.path("retryBudget").path("retryRatio").asDouble()).isEqualTo(0.2);
    assertThat(spec.path("retryBudget").path("minRetriesPerSecond").asInt()).isEqualTo(10);
    assertThat(spec.path("retryBudget").path("ttl").asText()).isEqualTo("10s");
    assertThat(spec.path("dstOverrides")).extracting(d -> d.path("authority").asText() + "=" + d.path("weight").asInt())
        .containsExactly("fast.default.svc.cluster.local:8080=50", "medium.default.svc.cluster.local:8080=30",
            "slow.default.svc.cluster.local:8080=20");
  }

  @Test
  void startRefusesAMissingDirectory() {
    source = new FileSource(dir.resolve("nope"), store, clock.timeSource());
    assertThatThrownBy(source::start)
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("(expected: an existing directory)");
    assertThat(source.isSynced()).isFalse();
  }

  @Test
  void watchServiceFollowsCreateEditRenameAndDelete() throws IOException {
    realScheduler = Executors.newSingleThreadScheduledExecutor();
    source = new FileSource(dir, store, TimeSource.system(realScheduler));
    source.start();
    assertThat(store.size()).isZero();
    Duration wait = Duration.ofSeconds(10);

    write("rules.yaml", tagRoute("gray", 1));
    await().atMost(wait).until(() -> stored(GRAY).isPresent());

    write("rules.yaml", tagRoute("gray", 2));
    await().atMost(wait).until(() -> priority() == 2);

    Path tmp = write(".rules.yaml.tmp", tagRoute("gray", 3));
    Files.move(tmp, dir.resolve("rules.yaml"), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    await().atMost(wait).until(() -> priority() == 3);

    Files.delete(dir.resolve("rules.yaml"));
    await().atMost(wait).until(() -> stored(GRAY).isEmpty());
    assertThat(source.errors()).isZero();
  }

  @Test
  void closeStopsTheWatchThread() {
    realScheduler = Executors.newSingleThreadScheduledExecutor();
    source = new FileSource(dir, store, TimeSource.system(realScheduler));
    source.start();
    assertThat(watchThreads()).isEqualTo(1);
    source.close();
    source.close(); // idempotent
    assertThat(watchThreads()).isZero();
  }

  private static long watchThreads() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.getName().equals("portage-files-watch") && t.isAlive())
        .count();
  }
}
