package dev.portage.bench.soak;

import java.io.IOException;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Injects one fault at a time at seeded random intervals: SIGKILL and restart of an agent, of a
 * tunnel server replica or of the control plane, or a stop and start of the hub's upstream. The kinds
 * come in shuffled rounds, so each occurs about equally often. Each fault's window runs from the
 * kill until the target answers its readiness probe again, plus a grace period. Runs on its own
 * thread ({@link #run}); {@link #windows()} may be read from any thread.
 */
final class FaultInjector {
  private static final Duration READY_TIMEOUT = Duration.ofSeconds(60);

  private final Component agent;
  private final Component server;
  private final Component controlPlane;
  private final FakeApiServer upstream;
  private final SoakClock clock;
  private final SplittableRandom random;
  private final Duration minGap;
  private final Duration maxGap;
  private final Duration grace;
  private final PrintStream log;
  private final List<FaultWindow> windows = new ArrayList<>();
  private final List<FaultKind> round = new ArrayList<>();

  /**
   * @param agent the agent replica that is killed (the other one stays up, so its resources can be
   *     judged over the whole run); likewise {@code server}
   */
  FaultInjector(Component agent, Component server, Component controlPlane, FakeApiServer upstream,
      SoakClock clock, long seed, Duration minGap, Duration maxGap, Duration grace, PrintStream log) {
    this.agent = agent;
    this.server = server;
    this.controlPlane = controlPlane;
    this.upstream = upstream;
    this.clock = clock;
    this.random = new SplittableRandom(seed);
    this.minGap = minGap;
    this.maxGap = maxGap;
    this.grace = grace;
    this.log = log;
  }

  /** Injects faults from {@code firstNanos} until no fault fits before {@code lastNanos}, or stop. */
  void run(long firstNanos, long lastNanos, CountDownLatch stop) {
    try {
      if (!waitUntil(firstNanos, stop)) {
        return;
      }
      while (true) {
        long gap = minGap.toNanos() + (long) (random.nextDouble() * (maxGap.toNanos() - minGap.toNanos()));
        if (clock.now() + gap > lastNanos || !waitUntil(clock.now() + gap, stop)) {
          return;
        }
        inject(next(), stop);
        if (stop.getCount() == 0) {
          return;
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (IOException e) {
      log.println("soak: fault injection stopped: " + e);
    }
  }

  private FaultKind next() {
    if (round.isEmpty()) {
      round.addAll(List.of(FaultKind.values()));
      for (int i = round.size() - 1; i > 0; i--) { // Fisher-Yates with the seeded generator
        int j = random.nextInt(i + 1);
        round.set(i, round.set(j, round.get(i)));
      }
    }
    return round.remove(round.size() - 1);
  }

  private void inject(FaultKind kind, CountDownLatch stop) throws InterruptedException, IOException {
    Component target = switch (kind) {
      case KILL_AGENT -> agent;
      case KILL_SERVER -> server;
      case KILL_CONTROL_PLANE -> controlPlane;
      case STOP_HUB_UPSTREAM -> null;
    };
    String name = target == null ? "hub-upstream" : target.name;
    long down = kind == FaultKind.STOP_HUB_UPSTREAM
        ? 3_000 + random.nextInt(9_000) : 1_000 + random.nextInt(4_000);
    long start = clock.now();
    int index = open(new FaultWindow(kind, name, start, TimeUnit.MILLISECONDS.toNanos(down), -1, grace.toNanos(), false));
    log.printf("soak: %s fault: %s %s, down %d ms%n", SoakClock.format(start), kind.label, name, down);
    boolean ready;
    if (target == null) {
      upstream.stop();
      stop.await(down, TimeUnit.MILLISECONDS);
      upstream.start();
      ready = true;
    } else {
      target.kill9();
      boolean ending = stop.await(down, TimeUnit.MILLISECONDS);
      target.start("restart after " + kind.label + (ending ? " (soak ending)" : ""), clock.now());
      ready = !ending && target.awaitReady(READY_TIMEOUT, stop, clock);
    }
    long recovered = clock.now();
    boolean cutShort = !ready && stop.getCount() == 0;
    synchronized (this) {
      windows.set(index, new FaultWindow(kind, name, start, TimeUnit.MILLISECONDS.toNanos(down),
          ready ? recovered : -1, grace.toNanos(), cutShort));
    }
    log.printf("soak: %s %s %s after %.1f s%n", SoakClock.format(recovered), name,
        ready ? "ready again" : cutShort ? "not ready yet when the soak ended" : "NOT ready",
        (recovered - start) / 1e9);
  }

  private synchronized int open(FaultWindow w) {
    windows.add(w);
    return windows.size() - 1;
  }

  private boolean waitUntil(long atNanos, CountDownLatch stop) throws InterruptedException {
    long wait = atNanos - clock.now();
    return wait <= 0 || !stop.await(wait, TimeUnit.NANOSECONDS);
  }

  synchronized List<FaultWindow> windows() {
    return List.copyOf(windows);
  }
}
