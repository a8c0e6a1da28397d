package dev.portage.core.admin;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.text.ParseException;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.Map;
import jdk.jfr.Configuration;
import jdk.jfr.Recording;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The JVM's stand-in for Go's {@code net/http/pprof} on an admin listener, for components whose
 * upstream has {@code --enable-profiling}: a continuous JDK Flight Recorder recording (the JDK's
 * {@code profile} settings: CPU samples, allocations, I/O, GC; the last {@value #KEEP_MINUTES} minutes
 * are kept on disk, at most {@value #KEEP_MEGABYTES} MB) and three routes:
 *
 * <table>
 *   <caption>Routes</caption>
 *   <tr><td>{@code /debug/pprof/}</td><td>this list</td></tr>
 *   <tr><td>{@code /debug/pprof/profile?seconds=N}</td><td>a {@code .jfr} file covering at least the
 *       last N seconds (default 30, at most {@value #KEEP_MINUTES} minutes), answered at once: pprof
 *       records the next N seconds, the recording already holds the last ones. Open it with JDK Mission
 *       Control or {@code jfr print}.</td></tr>
 *   <tr><td>{@code /debug/pprof/goroutine}</td><td>a thread dump (pprof's goroutine dump), text</td></tr>
 * </table>
 *
 * <p>With contention profiling (upstream's {@code --enable-contention-profiling}) the recording also
 * takes every monitor wait and thread park of 1 ms or more, the JVM's block and mutex profiles.
 * Thread-safe; {@link #close()} stops the recording.
 */
public final class Profiling implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(Profiling.class);

  static final int KEEP_MINUTES = 10;
  static final int KEEP_MEGABYTES = 64;
  private static final Duration DEFAULT_WINDOW = Duration.ofSeconds(30);

  private final Recording recording;
  private final InstantSource wall;

  private Profiling(Recording recording, InstantSource wall) {
    this.recording = recording;
    this.wall = wall;
  }

  /**
   * Starts the recording.
   *
   * @param contention also record monitor waits and parks of 1 ms or more
   * @param wall the clock that places the profile window
   */
  public static Profiling start(boolean contention, InstantSource wall) {
    Map<String, String> settings;
    try {
      settings = new java.util.HashMap<>(Configuration.getConfiguration("profile").getSettings());
    } catch (IOException | ParseException e) {
      throw new IllegalStateException("the JDK's JFR 'profile' settings cannot be read", e);
    }
    for (String event : List.of("jdk.JavaMonitorEnter", "jdk.JavaMonitorWait", "jdk.ThreadPark")) {
      settings.put(event + "#enabled", Boolean.toString(contention));
      settings.put(event + "#threshold", "1 ms");
    }
    Recording recording = new Recording(settings);
    recording.setName("portage-profiling");
    recording.setToDisk(true);
    recording.setMaxAge(Duration.ofMinutes(KEEP_MINUTES));
    recording.setMaxSize(KEEP_MEGABYTES * 1024L * 1024L);
    recording.start();
    log.info("profiling on: JFR recording of the last {} minutes{} served under /debug/pprof/ on the admin port",
        KEEP_MINUTES, contention ? " with lock contention" : "");
    return new Profiling(recording, wall);
  }

  /** Adds the {@code /debug/pprof/} routes to {@code admin}. */
  public AdminServer.Builder addRoutes(AdminServer.Builder admin) {
    return admin
        .route("/debug/pprof/", request -> AdminResponse.text(200,
            "/debug/pprof/profile?seconds=N  JFR recording covering the last N seconds (default 30)\n"
                + "/debug/pprof/goroutine          thread dump\n"))
        .route("/debug/pprof/profile", this::profile)
        .route("/debug/pprof/goroutine", request -> AdminResponse.text(200, ThreadDump.text()));
  }

  private AdminResponse profile(AdminRequest request) {
    Duration window = DEFAULT_WINDOW;
    List<String> seconds = request.parameters("seconds");
    if (!seconds.isEmpty()) {
      try {
        window = Duration.ofSeconds(Long.parseLong(seconds.get(0)));
      } catch (NumberFormatException e) {
        window = Duration.ZERO;
      }
      if (window.isNegative() || window.isZero() || window.compareTo(Duration.ofMinutes(KEEP_MINUTES)) > 0) {
        return AdminResponse.text(400, "seconds: " + seconds.get(0) + " (expected: 1.." + KEEP_MINUTES * 60 + ")\n");
      }
    }
    Instant end = wall.instant();
    byte[] jfr;
    // A stopped copy of the running recording (its chunks so far); only a stopped one can be read.
    try (Recording snapshot = recording.copy(true);
        InputStream in = snapshot.getStream(end.minus(window), end)) {
      jfr = in == null ? null : in.readAllBytes();
    } catch (IOException e) {
      throw new UncheckedIOException("reading the JFR recording", e);
    }
    if (jfr == null) {
      return AdminResponse.text(503, "no recorded data yet\n");
    }
    return new AdminResponse(200, "application/octet-stream", jfr,
        Map.of("Content-Disposition", "attachment; filename=\"profile.jfr\""));
  }

  /** Stops and discards the recording. */
  @Override
  public void close() {
    recording.close();
  }
}
