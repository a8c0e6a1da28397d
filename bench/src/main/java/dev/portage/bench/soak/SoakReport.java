package dev.portage.bench.soak;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The soak's Markdown report and verdict: requests per path (failures inside and outside the fault
 * windows of faults that may break that path), verified bytes and checksum mismatches, resources per
 * component with the leak verdict, the faults, crashes, and the most frequent failure reasons.
 * Built once at the end, on the main thread.
 */
final class SoakReport {
  /** Everything the report is built from. */
  record Inputs(String header, List<PathStats> paths, List<Component> components, List<FaultWindow> windows,
      List<Sampler.Crash> crashes, Map<String, Integer> stopExitCodes, long warmupNanos, long churnChanges,
      int stuckWorkers, List<ConvergenceCheck.Result> convergence) {}

  private final Inputs in;
  private final List<String> problems = new ArrayList<>();
  private final String markdown;

  SoakReport(Inputs in) {
    this.in = in;
    this.markdown = build();
  }

  String markdown() {
    return markdown;
  }

  /** Why the soak failed; empty when it passed. */
  List<String> problems() {
    return List.copyOf(problems);
  }

  private boolean inWindow(Traffic t, PathStats.Failure f) {
    for (FaultWindow w : in.windows()) {
      if (w.covers(t, f.startNanos()) || w.covers(t, f.endNanos())
          || (f.startNanos() <= w.startNanos() && w.startNanos() <= f.endNanos() && w.kind().affects.contains(t))) {
        return true;
      }
    }
    return false;
  }

  private String build() {
    StringBuilder b = new StringBuilder(in.header());
    b.append("\n| path | attempted | succeeded | failed in fault windows | failed outside | of which timeouts | bytes verified | checksum mismatches |\n");
    b.append("|---|---|---|---|---|---|---|---|\n");
    Map<String, Integer> outsideReasons = new LinkedHashMap<>();
    Map<String, Integer> insideReasons = new LinkedHashMap<>();
    for (PathStats p : in.paths()) {
      long inside = 0;
      long outside = 0;
      long timeouts = 0;
      for (PathStats.Failure f : p.failures()) {
        boolean covered = inWindow(p.traffic, f);
        String key = p.traffic.name().toLowerCase(Locale.ROOT) + ": " + normalise(f.reason());
        if (covered) {
          inside++;
          insideReasons.merge(key, 1, Integer::sum);
        } else {
          outside++;
          outsideReasons.merge(key, 1, Integer::sum);
        }
        if (f.timeout()) {
          timeouts++;
        }
      }
      b.append(String.format(Locale.ROOT, "| %s | %d | %d | %d | %d | %d | %s | %d |%n", p.traffic.label,
          p.attempted(), p.succeeded(), inside, outside + p.droppedFailures(), timeouts,
          p.traffic == Traffic.HUB ? "– (content checked)" : mib(p.bytesVerified()), p.mismatches()));
      if (p.mismatches() > 0) {
        problems.add(p.traffic.label + ": " + p.mismatches() + " completed transfers with a wrong checksum "
            + p.mismatchReasons());
      }
      if (p.succeeded() == 0) {
        problems.add(p.traffic.label + ": no request succeeded");
      }
    }
    b.append("\nA failure is \"in a fault window\" when it overlaps a fault that may break its path (tunnel: agent or server kill; "
        + "service proxy and sidecar: control-plane kill; hub: upstream stop), from the kill until the target is ready again plus the grace period.\n");

    b.append("\n| component | starts | RSS max MiB | RSS first→last quarter (max MiB) | threads first→last quarter (max) | open fds baseline→end | live heap after GC, warm→end (MiB) | verdict |\n");
    b.append("|---|---|---|---|---|---|---|---|\n");
    for (Component c : in.components()) {
      ResourceSeries.Verdict v = c.series().verdict(in.warmupNanos());
      String verdict;
      if (!v.judged()) {
        verdict = "n/a (latest instance: " + v.samples() + " samples after warm-up)";
      } else if (v.leak()) {
        List<String> what = new ArrayList<>();
        if (!v.rssFlat()) {
          what.add("RSS +" + pct(v.rssLastMax(), v.rssFirstMax()));
        }
        if (!v.threadsFlat()) {
          what.add("threads +" + pct(v.threadsLastMax(), v.threadsFirstMax()));
        }
        if (!v.fdsBack()) {
          what.add("fds " + v.fdBaseline() + "→" + v.fdEnd());
        }
        if (!v.heapFlat()) {
          what.add("live heap " + mib(v.heapBaseline()) + "→" + mib(v.heapEnd()) + " MiB");
        }
        verdict = "**LEAK?** " + String.join(", ", what);
        problems.add(c.name + ": " + String.join(", ", what));
      } else {
        verdict = "flat";
      }
      b.append(String.format(Locale.ROOT, "| %s | %d | %s | %s | %s | %s | %s | %s |%n", c.name, c.instances(),
          mib(v.rssMaxAll()),
          v.judged() ? mib(v.rssFirstMax()) + " → " + mib(v.rssLastMax()) : "–",
          v.judged() ? v.threadsFirstMax() + " → " + v.threadsLastMax() : "max " + v.threadsMaxAll(),
          v.judged() ? v.fdBaseline() + " → " + v.fdEnd() : "–",
          v.heapBaseline() >= 0 && v.heapEnd() >= 0 ? mib(v.heapBaseline()) + " → " + mib(v.heapEnd()) : "–",
          verdict));
    }
    b.append("\nLeak rule (latest instance of each component, samples every 5 s after warm-up): RSS and threads of the last quarter within +"
        + (int) (ResourceSeries.FLAT * 100) + " % of the first quarter (threads +" + ResourceSeries.THREAD_SLACK
        + "), open fds after the load stopped within +" + (int) (ResourceSeries.FLAT * 100) + " % (+" + ResourceSeries.FD_SLACK
        + ") of the first quarter's median; live heap after a full GC (jcmd) at the end within +"
        + (int) (ResourceSeries.FLAT * 100) + " % (+8 MiB) of the figure after warm-up. Warm-up counts from when the"
        + " instance answered its readiness probe. Children run with -Xms = -Xmx and -XX:+AlwaysPreTouch, so RSS growth"
        + " is off-heap growth (direct buffers, threads, metaspace, code).\n");

    b.append("\n| t | fault | target | down | ready again after |\n|---|---|---|---|---|\n");
    for (FaultWindow w : in.windows()) {
      b.append(String.format(Locale.ROOT, "| %s | %s | %s | %.1f s | %s |%n", SoakClock.format(w.startNanos()),
          w.kind().label, w.target(), w.downNanos() / 1e9,
          w.cutShort() ? "(soak ended first)" : w.recoveredNanos() < 0 ? "**not ready**" : String.format(Locale.ROOT, "%.1f s", (w.recoveredNanos() - w.startNanos()) / 1e9)));
      if (w.recoveredNanos() < 0 && !w.cutShort()) {
        problems.add(w.target() + " did not become ready after " + w.kind().label + " at " + SoakClock.format(w.startNanos()));
      }
    }
    b.append("\nControl-plane manifest changes: ").append(in.churnChanges()).append('\n');
    for (ConvergenceCheck.Result r : in.convergence()) {
      b.append(String.format(Locale.ROOT, "%nAfter the load: soak-web pinned to %s; %s %s%n", r.pinned(), r.proxy(),
          r.converged() ? String.format(Locale.ROOT, "sent every request of a round there after %.1f s", r.afterNanos() / 1e9)
              : "**still did not** after " + String.format(Locale.ROOT, "%.0f s (last answer: %s)", r.afterNanos() / 1e9, r.lastSeen())));
      if (!r.converged()) {
        problems.add(r.proxy() + " did not follow the control plane's last endpoint change (" + r.lastSeen() + ")");
      }
    }

    for (Sampler.Crash c : in.crashes()) {
      problems.add(c.component() + " exited on its own with " + c.exitCode() + " at " + SoakClock.format(c.atNanos()));
      b.append("\n**Crash**: ").append(c.component()).append(" exited with ").append(c.exitCode())
          .append(" at ").append(SoakClock.format(c.atNanos())).append("; log tail:\n\n```\n")
          .append(String.join("\n", c.logTail())).append("\n```\n");
    }
    if (in.stuckWorkers() > 0) {
      problems.add(in.stuckWorkers() + " worker(s) still stuck in a request 30 s after the load stopped");
    }
    List<String> badStops = new ArrayList<>();
    in.stopExitCodes().forEach((name, code) -> {
      if (code != 0) {
        badStops.add(name + " " + (code < 0 ? "did not exit within the grace (SIGKILL)" : "exit " + code));
      }
    });
    b.append("\nGraceful stop at the end (SIGTERM; agents twice): ")
        .append(badStops.isEmpty() ? "every component exited 0" : String.join(", ", badStops)).append('\n');

    appendReasons(b, "Failures outside fault windows", outsideReasons);
    appendReasons(b, "Failures inside fault windows", insideReasons);
    b.append("\n**Result: ").append(problems.isEmpty() ? "PASS" : "FAIL").append("**")
        .append(problems.isEmpty() ? "" : " — " + String.join("; ", problems)).append('\n');
    return b.toString();
  }

  private static void appendReasons(StringBuilder b, String title, Map<String, Integer> reasons) {
    if (reasons.isEmpty()) {
      return;
    }
    b.append('\n').append(title).append(" (most frequent, numbers elided):\n\n");
    reasons.entrySet().stream().sorted(Map.Entry.<String, Integer>comparingByValue(Comparator.reverseOrder()))
        .limit(8).forEach(e -> b.append("- ").append(e.getValue()).append(" × `")
            .append(e.getKey().replace('`', '\'')).append("`\n"));
  }

  /** A failure reason with numbers elided, so equal causes group. */
  static String normalise(String reason) {
    String r = reason.replaceAll("\\d+", "N");
    return r.length() > 160 ? r.substring(0, 160) + "…" : r;
  }

  private static String mib(long bytes) {
    return String.format(Locale.ROOT, "%.1f", bytes / 1048576.0);
  }

  private static String pct(long last, long first) {
    return first == 0 ? "∞" : String.format(Locale.ROOT, "%.0f %%", 100.0 * (last - first) / first);
  }
}
