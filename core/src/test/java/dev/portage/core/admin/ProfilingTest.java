package dev.portage.core.admin;

import static org.assertj.core.api.Assertions.assertThat;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;
import java.util.HashSet;
import java.util.Set;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code /debug/pprof/} on an admin listener: a real JFR recording and a thread dump. */
class ProfilingTest {
  private final HttpClient http = HttpClient.newHttpClient();
  private Profiling profiling;
  private AdminServer server;

  @TempDir Path dir;

  @AfterEach
  void tearDown() {
    if (server != null) {
      server.close();
    }
    if (profiling != null) {
      profiling.close();
    }
    http.close();
  }

  private HttpResponse<byte[]> get(String path) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.localAddress().getPort() + path))
        .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofByteArray());
  }

  private void start(boolean contention) throws Exception {
    profiling = Profiling.start(contention, InstantSource.system());
    server = profiling.addRoutes(AdminServer.builder().registry(new PrometheusRegistry())).build().start();
  }

  @Test
  void profileIsAJfrRecordingOfTheLastSeconds() throws Exception {
    start(true);
    HttpResponse<byte[]> r = get("/debug/pprof/profile?seconds=5");
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.headers().firstValue("Content-Type")).hasValue("application/octet-stream");
    assertThat(r.body()).startsWith('F', 'L', 'R', 0); // JFR's file magic
    Path file = Files.write(dir.resolve("profile.jfr"), r.body());
    Set<String> types = new HashSet<>();
    for (RecordedEvent e : RecordingFile.readAllEvents(file)) {
      types.add(e.getEventType().getName());
    }
    assertThat(types).contains("jdk.JVMInformation", "jdk.ActiveRecording");
  }

  @Test
  void goroutineIsAThreadDumpAndTheIndexListsTheRoutes() throws Exception {
    start(false);
    assertThat(new String(get("/debug/pprof/goroutine").body())).contains("\"main\"").contains("\tat ");
    assertThat(new String(get("/debug/pprof/").body())).contains("/debug/pprof/profile").contains("/debug/pprof/goroutine");
  }

  @Test
  void badWindowIsRefusedWithTheRange() throws Exception {
    start(false);
    for (String seconds : new String[] {"0", "-3", "abc", "601"}) {
      HttpResponse<byte[]> r = get("/debug/pprof/profile?seconds=" + seconds);
      assertThat(r.statusCode()).as(seconds).isEqualTo(400);
      assertThat(new String(r.body())).isEqualTo("seconds: " + seconds + " (expected: 1..600)\n");
    }
  }

  @Test
  void withoutProfilingThereIsNoPprof() throws Exception {
    server = AdminServer.builder().registry(new PrometheusRegistry()).build().start();
    assertThat(get("/debug/pprof/profile").statusCode()).isEqualTo(404);
  }
}
