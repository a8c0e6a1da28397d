package dev.portage.cli;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;

class PortageCommandTest {

  private final StringWriter out = new StringWriter();
  private final StringWriter err = new StringWriter();

  private int run(String... args) {
    CommandLine cl = PortageCommand.commandLine();
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(err, true));
    return cl.execute(args);
  }

  @Test
  void versionNamesPortageAndTheJvm() {
    assertThat(run("--version")).isZero();
    assertThat(out.toString()).startsWith("portage ").contains("java ");
  }

  @Test
  void helpListsGlobalLoggingOptions() {
    assertThat(run("--help")).isZero();
    assertThat(out.toString()).contains("Usage: portage").contains("--log-level").contains("--log-format");
  }

  @Test
  void noArgumentsPrintsUsage() {
    assertThat(run()).isZero();
    assertThat(out.toString()).contains("Usage: portage");
  }

  @Test
  void unknownOptionIsAUsageError() {
    assertThat(run("--no-such-flag")).isEqualTo(2);
    assertThat(err.toString()).contains("Unknown option: '--no-such-flag'");
  }

  @Test
  void badLogLevelIsRejectedWithTheChoices() {
    assertThat(run("--log-level", "LOUD")).isEqualTo(2);
    assertThat(err.toString()).contains("--log-level").contains("LOUD").contains("DEBUG");
  }

  @Test
  void bundledLogbackConfigurationLoadsWithoutErrors() {
    assertThat(run("--log-format", "json")).isZero();
    ch.qos.logback.classic.LoggerContext ctx =
        (ch.qos.logback.classic.LoggerContext) org.slf4j.LoggerFactory.getILoggerFactory();
    assertThat(ctx.getStatusManager().getCopyOfStatusList())
        .noneMatch(s -> s.getLevel() >= ch.qos.logback.core.status.Status.WARN);
    assertThat(run("--log-format", "text")).isZero();
  }

  @Test
  void globalLoggingFlagsAreAcceptedAfterASubcommand() {
    CommandLine cl = PortageCommand.commandLine();
    cl.parseArgs("agent", "--log-level", "warn", "--log-format", "json");
    PortageCommand top = cl.getCommand();
    assertThat(top.logging.level).isEqualTo(LoggingOptions.LogLevel.WARN);
    assertThat(top.logging.format).isEqualTo(LoggingOptions.Format.json);
  }

  @Test
  void logLevelIsAppliedCaseInsensitively() {
    assertThat(run("--log-level", "debug")).isZero();
    ch.qos.logback.classic.Logger root =
        (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    assertThat(root.getLevel()).isEqualTo(ch.qos.logback.classic.Level.DEBUG);
    assertThat(run("--log-level", "INFO")).isZero();
    assertThat(root.getLevel()).isEqualTo(ch.qos.logback.classic.Level.INFO);
  }

  @Test
  void aStartFailureNamesItsRootCause() throws IOException {
    try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      int code = run("server", "--mode", "http-connect", "--server-bind-address", "127.0.0.1",
          "--server-port", Integer.toString(taken.getLocalPort()),
          "--agent-port", "0", "--health-port", "0", "--admin-port", "0");
      assertThat(code).isEqualTo(1);
      assertThat(err.toString())
          .startsWith("portage: tunnel server failed to start: ")
          .contains(":" + taken.getLocalPort())
          .contains("Address already in use");
    }
  }

  @Test
  void messageChainListsEachMessageOnce() {
    IOException root = new IOException("Address already in use");
    Exception wrapper = new UncheckedIOException("tunnel server failed to start",
        new IOException("cannot bind to /127.0.0.1:8090: Address already in use", root));
    assertThat(PortageCommand.messageChain(wrapper))
        .isEqualTo("tunnel server failed to start: cannot bind to /127.0.0.1:8090: Address already in use");
    assertThat(PortageCommand.messageChain(new IllegalStateException()))
        .isEqualTo("IllegalStateException");
  }

  @Test
  void javaUtilLoggingRecordsGoThroughSlf4j() {
    Logger target = (Logger) LoggerFactory.getLogger("dev.portage.cli.jul-bridge-test");
    ListAppender<ILoggingEvent> captured = new ListAppender<>();
    captured.start();
    target.addAppender(captured);
    try {
      assertThat(run("--version")).isZero(); // any command applies the logging options
      java.util.logging.Logger.getLogger("dev.portage.cli.jul-bridge-test").warning("from JUL, like grpc-java");
      assertThat(captured.list).singleElement()
          .satisfies(e -> assertThat(e.getFormattedMessage()).isEqualTo("from JUL, like grpc-java"));
    } finally {
      target.detachAppender(captured);
    }
  }

  @Test
  void klogVerbositySetsTheLevelAndLogLevelWinsOverIt() {
    ch.qos.logback.classic.Logger root =
        (ch.qos.logback.classic.Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    try {
      assertThat(run("server", "--logtostderr=true", "-v=4", "--help")).isZero();
      assertThat(root.getLevel()).isEqualTo(ch.qos.logback.classic.Level.DEBUG);
      assertThat(run("agent", "--v", "7", "--help")).isZero();
      assertThat(root.getLevel()).isEqualTo(ch.qos.logback.classic.Level.TRACE);
      assertThat(run("hub", "--v=2", "--log-level", "warn", "--help")).isZero();
      assertThat(root.getLevel()).isEqualTo(ch.qos.logback.classic.Level.WARN);
    } finally {
      assertThat(run("--version")).isZero();
    }
    assertThat(root.getLevel()).isEqualTo(ch.qos.logback.classic.Level.INFO);
  }

  @Test
  void klogLogFileReceivesTheLogAndIsClosedWhenNotAskedFor(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
      throws IOException {
    java.nio.file.Path file = dir.resolve("proxy-server.log");
    try {
      assertThat(run("service-proxy", "--logtostderr=false", "--log-file=" + file, "--help")).isZero();
      LoggerFactory.getLogger("dev.portage.cli.klog-file-test").info("written to the klog file");
    } finally {
      assertThat(run("--version")).isZero();
    }
    LoggerFactory.getLogger("dev.portage.cli.klog-file-test").info("after the file was closed");
    assertThat(java.nio.file.Files.readString(file))
        .contains("written to the klog file")
        .doesNotContain("after the file was closed");
  }

  @Test
  void klogStderrThresholdFiltersStderrOnlyWhenLogtostderrIsFalse() {
    ch.qos.logback.classic.Logger root =
        (ch.qos.logback.classic.Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    // The tests' logback configuration names its console OUT; production's is STDERR (logback.xml).
    ch.qos.logback.core.ConsoleAppender<ILoggingEvent> stderr = new ch.qos.logback.core.ConsoleAppender<>();
    stderr.setContext(root.getLoggerContext());
    stderr.setName("STDERR");
    ch.qos.logback.classic.encoder.PatternLayoutEncoder encoder = new ch.qos.logback.classic.encoder.PatternLayoutEncoder();
    encoder.setContext(root.getLoggerContext());
    encoder.setPattern("%msg%n");
    encoder.start();
    stderr.setEncoder(encoder);
    stderr.start();
    root.addAppender(stderr);
    try {
      assertThat(run("agent", "--logtostderr=false", "--stderrthreshold=WARNING", "--help")).isZero();
      assertThat(stderr.getCopyOfAttachedFiltersList()).singleElement()
          .satisfies(f -> assertThat(f.decide(event(ch.qos.logback.classic.Level.INFO)))
              .isEqualTo(ch.qos.logback.core.spi.FilterReply.DENY));
      assertThat(run("agent", "--logtostderr=true", "--stderrthreshold=WARNING", "--help")).isZero();
      assertThat(stderr.getCopyOfAttachedFiltersList()).isEmpty();
      assertThat(run("--version")).isZero();
      assertThat(stderr.getCopyOfAttachedFiltersList()).isEmpty();
    } finally {
      root.detachAppender(stderr);
      stderr.stop();
    }
  }

  private static ILoggingEvent event(ch.qos.logback.classic.Level level) {
    ch.qos.logback.classic.spi.LoggingEvent e = new ch.qos.logback.classic.spi.LoggingEvent();
    e.setLevel(level);
    e.setMessage("m");
    return e;
  }

  @Test
  void klogFlagsWithoutEffectLogOneWarnEachOnEveryKlogCommand() {
    Logger forms = (Logger) LoggerFactory.getLogger(dev.portage.cli.flags.FlagForms.class);
    for (String command : new String[] {"server", "agent", "hub", "service-proxy"}) {
      ListAppender<ILoggingEvent> captured = new ListAppender<>();
      captured.start();
      forms.addAppender(captured);
      try {
        assertThat(run(command, "--vmodule=proxy=4", "--skip-headers", "--log_dir", "/var/log", "--help"))
            .as(command).isZero();
      } finally {
        forms.detachAppender(captured);
      }
      assertThat(captured.list).as(command).extracting(ILoggingEvent::getFormattedMessage).containsExactlyInAnyOrder(
          "flag --vmodule is accepted for compatibility with klog and has no effect in Portage",
          "flag --skip-headers is accepted for compatibility with klog and has no effect in Portage",
          "flag --log_dir is accepted for compatibility with klog and has no effect in Portage");
    }
  }

  @Test
  void aRepeatedFlagTakesTheLastValueOnEverySubcommand() {
    CommandLine cl = PortageCommand.commandLine();
    cl.parseArgs("server", "--server-port", "1", "--server-port=2");
    assertThat(((ServerCommand) cl.getSubcommands().get("server").getCommand()).serverPort).isEqualTo(2);
  }
}
