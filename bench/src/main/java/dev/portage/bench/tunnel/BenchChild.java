package dev.portage.bench.tunnel;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import dev.portage.core.net.NettyDefaults;
import dev.portage.core.time.TimeSource;
import dev.portage.tunnel.agent.TunnelAgent;
import dev.portage.tunnel.agent.TunnelAgentConfig;
import dev.portage.tunnel.server.FrontendMode;
import dev.portage.tunnel.server.TlsFiles;
import dev.portage.tunnel.server.TunnelServer;
import dev.portage.tunnel.server.TunnelServerConfig;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Entry point of the JVMs the harness starts, one component each so their heaps and file descriptors
 * are measured apart: {@code server <grpc|http-connect> [queue MiB] [tls=DIR] [groups=LIST]}, {@code agent
 * <agentPort> [tls=DIR] [groups=LIST]} or {@code backend}. With {@code tls=DIR} ({@link BenchPki}'s files)
 * the server's frontend and agent listener speak TLS with {@code DIR/server.crt}, and the agent trusts
 * {@code DIR/ca.crt}; {@code groups=} sets their TLS key-exchange groups ({@code
 * --tls-key-exchange-groups}, comma-separated).
 * Speaks a line protocol on stdout ({@code @@ key value}) and answers {@code heap} on stdin with
 * {@code @@ heap <used bytes after GC>}; stdin EOF ends the process.
 */
public final class BenchChild {
  /**
   * Per-connection credit window of the server and agent ({@code -Dbench.window=BYTES} through
   * {@code TUNNEL_BENCH_CHILD_OPTS}); null keeps the configs' default. For A/B runs of the window.
   */
  private static final Long WINDOW = Long.getLong("bench.window");

  private BenchChild() {}

  public static void main(String[] args) throws Exception {
    // The Netty settings `portage` runs with (leak detection off): measure what users run.
    NettyDefaults.apply();
    logWarningsToStderr();
    AutoCloseable component;
    switch (args[0]) {
      case "server" -> {
        FrontendMode mode = args[1].equals("grpc") ? FrontendMode.GRPC : FrontendMode.HTTP_CONNECT;
        TunnelServerConfig.Builder config = TunnelServerConfig.builder().ephemeralPorts().healthPort(-1)
            .mode(mode).serverId("bench-" + args[1]);
        for (int i = 2; i < args.length; i++) {
          if (args[i].startsWith("tls=")) {
            BenchPki pki = new BenchPki(Path.of(args[i].substring(4)));
            TlsFiles files = new TlsFiles(pki.cert(), pki.key(), null);
            config.frontendTls(files).agentTls(files);
          } else if (args[i].startsWith("groups=")) {
            config.keyExchangeGroups(groups(args[i]));
          } else {
            config.connectionQueueBytes(Long.parseLong(args[i]) << 20); // per-connection queue, MiB
          }
        }
        if (WINDOW != null) {
          config.flowControlWindow(WINDOW);
        }
        TunnelServer s = TunnelServer.builder(config.build()).build().start();
        say("agentPort", s.agentPort());
        say("serverPort", s.serverPort());
        component = s;
      }
      case "agent" -> {
        ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1);
        timer.setRemoveOnCancelPolicy(true); // dial timeouts are cancelled on every dial

        TunnelAgentConfig.Builder config = TunnelAgentConfig.builder().proxyServerHost("127.0.0.1")
            .proxyServerPort(Integer.parseInt(args[1])).agentId("bench-agent")
            .healthServerPort(-1).adminServerPort(-1);
        for (int i = 2; i < args.length; i++) {
          if (args[i].startsWith("tls=")) {
            config.caCert(new BenchPki(Path.of(args[i].substring(4))).ca());
          } else if (args[i].startsWith("groups=")) {
            config.keyExchangeGroups(groups(args[i]));
          } else {
            throw new IllegalArgumentException("agent argument: " + args[i] + " (expected: tls=DIR or groups=LIST)");
          }
        }
        if (WINDOW != null) {
          config.flowControlWindow(WINDOW);
        }
        TunnelAgent a = new TunnelAgent(config.build(),
            TimeSource.system(timer), new PrometheusRegistry()).start();
        component = () -> {
          a.close();
          timer.shutdownNow();
        };
      }
      case "backend" -> {
        BenchBackend b = new BenchBackend();
        say("port", b.port());
        component = b;
      }
      default -> throw new IllegalArgumentException("role: " + args[0] + " (expected: server, agent or backend)");
    }
    say("ready", 1);
    BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line; (line = stdin.readLine()) != null; ) {
      if (line.equals("heap")) {
        for (int i = 0; i < 3; i++) {
          System.gc();
        }
        say("heap", ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
      }
    }
    component.close();
  }

  /** stdout carries the line protocol; logs go to stderr (the harness writes it to a file). */
  private static void logWarningsToStderr() {
    LoggerContext ctx = (LoggerContext) LoggerFactory.getILoggerFactory();
    ch.qos.logback.classic.Logger root = ctx.getLogger(Logger.ROOT_LOGGER_NAME);
    root.detachAndStopAllAppenders();
    PatternLayoutEncoder encoder = new PatternLayoutEncoder();
    encoder.setContext(ctx);
    encoder.setPattern("%d{HH:mm:ss.SSS} %-5level [%thread] %logger{30} - %msg%n");
    encoder.start();
    ConsoleAppender<ILoggingEvent> appender = new ConsoleAppender<>();
    appender.setContext(ctx);
    appender.setTarget("System.err");
    appender.setEncoder(encoder);
    appender.start();
    root.addAppender(appender);
    root.setLevel(Level.WARN);
  }

  /** The list of a {@code groups=A,B} argument. */
  private static java.util.List<String> groups(String arg) {
    return java.util.List.of(arg.substring("groups=".length()).split(","));
  }

  private static void say(String key, long value) {
    System.out.println("@@ " + key + " " + value);
    System.out.flush();
  }
}
