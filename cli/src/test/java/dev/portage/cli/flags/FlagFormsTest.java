package dev.portage.cli.flags;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import org.slf4j.event.Level;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParseResult;

class FlagFormsTest {

  @Command(name = "top", subcommands = {PflagCommand.class, GoCommand.class})
  static final class Top {}

  /** A command standing in for a pflag + klog upstream. */
  @Command(name = "pflag", mixinStandardHelpOptions = true)
  static final class PflagCommand implements UpstreamCompatible {
    @Mixin KlogOptions klog = new KlogOptions();

    @Option(names = "--port", defaultValue = "8090")
    int port;

    @Option(names = "--flag")
    boolean flag;

    @Option(names = "--names", split = ",")
    List<String> names = new ArrayList<>(List.of("a", "b"));

    @Override
    public UpstreamFlags upstreamFlags() {
      return UpstreamFlags.pflag("Demo").bool("--enable-x").value("--dummy-ip");
    }
  }

  /** A command standing in for a Go flag package upstream. */
  @Command(name = "go")
  static final class GoCommand implements UpstreamCompatible {
    @Option(names = "--addr", defaultValue = ":8086")
    String addr;

    @Option(names = "--enable-h2")
    boolean enableH2;

    @Override
    public UpstreamFlags upstreamFlags() {
      return UpstreamFlags.goFlag("Go demo").bool("--enable-pprof").value("--trace-collector");
    }
  }

  private final CommandLine cl = new CommandLine(new Top());
  private final FlagForms forms = FlagForms.install(cl);

  private ParseResult parse(String... args) {
    return cl.parseArgs(args);
  }

  private PflagCommand pflag(String... args) {
    parse(prepend("pflag", args));
    return cl.getSubcommands().get("pflag").getCommand();
  }

  private GoCommand go(String... args) {
    parse(prepend("go", args));
    return cl.getSubcommands().get("go").getCommand();
  }

  private static String[] prepend(String first, String... rest) {
    String[] all = new String[rest.length + 1];
    all[0] = first;
    System.arraycopy(rest, 0, all, 1, rest.length);
    return all;
  }

  private List<String> usedWithoutEffect(String... args) {
    return forms.usedWithoutEffect(parse(args)).stream().map(o -> o.longestName()).toList();
  }

  @Test
  void valuesTakePflagsTwoFormsAndTheLastRepeatWins() {
    assertThat(pflag("--port=1").port).isEqualTo(1);
    assertThat(pflag("--port", "2").port).isEqualTo(2);
    assertThat(pflag("--port", "1", "--port=3").port).isEqualTo(3);
    assertThat(pflag().port).isEqualTo(8090);
  }

  @Test
  void booleansTakeGoSpellingsAndNoValueMeansTrue() {
    assertThat(pflag("--flag").flag).isTrue();
    assertThat(pflag("--flag=false").flag).isFalse();
    for (String yes : List.of("1", "t", "T", "TRUE", "true", "True")) {
      assertThat(pflag("--flag=" + yes).flag).as(yes).isTrue();
    }
    for (String no : List.of("0", "f", "F", "FALSE", "false", "False")) {
      assertThat(pflag("--flag=" + no).flag).as(no).isFalse();
    }
    assertThat(pflag("--flag=true", "--flag=false").flag).isFalse();
  }

  @Test
  void aBooleanValueGoDoesNotParseIsAClearError() {
    assertThatThrownBy(() -> pflag("--flag=yes"))
        .isInstanceOf(CommandLine.ParameterException.class)
        .hasMessageContaining("'yes' is not a boolean");
  }

  @Test
  void aSliceFlagsFirstUseReplacesTheDefaultAndLaterUsesAppend() {
    assertThat(pflag().names).containsExactly("a", "b");
    assertThat(pflag("--names", "x", "--names=y,z").names).containsExactly("x", "y", "z");
  }

  @Test
  void upstreamFlagsWithoutEffectParseInEveryFormAndKeepTheirValues() {
    assertThat(pflag("--enable-x", "--port", "5").port).isEqualTo(5);
    assertThat(pflag("--enable-x=false", "--dummy-ip", "10.0.0.1", "--port=6").port).isEqualTo(6);
    assertThat(pflag("--dummy-ip=10.0.0.1", "--enable-x", "--port", "7").port).isEqualTo(7);
    assertThat(usedWithoutEffect("pflag", "--enable-x", "--dummy-ip", "1.2.3.4"))
        .containsExactlyInAnyOrder("--enable-x", "--dummy-ip");
    assertThat(usedWithoutEffect("pflag", "--port", "1")).isEmpty();
  }

  @Test
  void eachUpstreamFlagWithoutEffectLogsOneWarnNamingIt() {
    Logger logger = (Logger) LoggerFactory.getLogger(FlagForms.class);
    ListAppender<ILoggingEvent> captured = new ListAppender<>();
    captured.start();
    logger.addAppender(captured);
    try {
      forms.warnWithoutEffect(parse("pflag", "--enable-x", "--enable-x=true", "--vmodule=proxy=4",
          "--skip-headers", "--port", "9"));
    } finally {
      logger.detachAppender(captured);
    }
    assertThat(captured.list).extracting(ILoggingEvent::getFormattedMessage).containsExactlyInAnyOrder(
        "flag --enable-x is accepted for compatibility with Demo and has no effect in Portage",
        "flag --vmodule is accepted for compatibility with klog and has no effect in Portage",
        "flag --skip-headers is accepted for compatibility with klog and has no effect in Portage");
    assertThat(captured.list).allMatch(e -> e.getLevel() == ch.qos.logback.classic.Level.WARN);
  }

  @Test
  void unknownFlagsAreStillRefused() {
    assertThatThrownBy(() -> pflag("--no-such-flag"))
        .isInstanceOf(CommandLine.UnmatchedArgumentException.class)
        .hasMessageContaining("--no-such-flag");
    assertThatThrownBy(() -> pflag("-addr=:1")).isInstanceOf(CommandLine.ParameterException.class);
  }

  @Test
  void goSyntaxCommandsTakeSingleDashLongFlags() {
    assertThat(go("-addr=:9000").addr).isEqualTo(":9000");
    assertThat(go("-addr", ":9001").addr).isEqualTo(":9001");
    assertThat(go("--addr=:9002").addr).isEqualTo(":9002");
    assertThat(go("-enable-h2").enableH2).isTrue();
    assertThat(go("-enable-h2=false").enableH2).isFalse();
    assertThat(go("-enable-pprof", "-trace-collector", "x:4317", "-addr=:1").addr).isEqualTo(":1");
    assertThat(usedWithoutEffect("go", "-enable-pprof=true", "-trace-collector=x"))
        .containsExactlyInAnyOrder("--enable-pprof", "--trace-collector");
  }

  @Test
  void klogVerbosityMapsToALogLevel() {
    assertThat(FlagForms.logSettings(parse("pflag")).level()).isNull();
    assertThat(FlagForms.logSettings(parse("pflag", "-v=2")).level()).isEqualTo(Level.INFO);
    assertThat(FlagForms.logSettings(parse("pflag", "-v", "4")).level()).isEqualTo(Level.DEBUG);
    assertThat(FlagForms.logSettings(parse("pflag", "--v=5")).level()).isEqualTo(Level.DEBUG);
    assertThat(FlagForms.logSettings(parse("pflag", "-v6")).level()).isEqualTo(Level.TRACE);
    assertThat(FlagForms.logSettings(parse("pflag", "--v", "9", "--v=0")).level()).isEqualTo(Level.INFO);
  }

  @Test
  void klogStderrAndFileFlagsDescribeTheOutput() {
    LogSettings plain = FlagForms.logSettings(parse("pflag", "--logtostderr=true"));
    assertThat(plain.stderrThreshold()).isNull();
    assertThat(plain.file()).isNull();

    LogSettings toFile = FlagForms.logSettings(parse("pflag", "--logtostderr=false",
        "--log_file=/var/log/x.log", "--log-file-max-size=10"));
    assertThat(toFile.file()).isEqualTo(Path.of("/var/log/x.log"));
    assertThat(toFile.fileMaxBytes()).isEqualTo(10L * 1024 * 1024);
    assertThat(toFile.stderrThreshold()).isEqualTo(Level.ERROR);

    assertThat(FlagForms.logSettings(parse("pflag", "--logtostderr=false", "--stderrthreshold=WARNING"))
        .stderrThreshold()).isEqualTo(Level.WARN);
    assertThat(FlagForms.logSettings(parse("pflag", "--logtostderr=false", "--stderrthreshold", "0"))
        .stderrThreshold()).isEqualTo(Level.INFO);
    assertThat(FlagForms.logSettings(parse("pflag", "--logtostderr=false", "--alsologtostderr"))
        .stderrThreshold()).isNull();
  }

  @Test
  void badKlogValuesAreClearErrors() {
    assertThatThrownBy(() -> FlagForms.logSettings(parse("pflag", "--logtostderr=false", "--stderrthreshold=LOUD")))
        .isInstanceOf(CommandLine.ParameterException.class)
        .hasMessageContaining("--stderrthreshold: 'LOUD'");
    assertThatThrownBy(() -> FlagForms.logSettings(parse("pflag", "-v=-1")))
        .isInstanceOf(CommandLine.ParameterException.class)
        .hasMessageContaining("-v: -1");
  }

  @Command(name = "clash")
  static final class Clash implements UpstreamCompatible {
    @Option(names = "--port")
    int port;

    @Override
    public UpstreamFlags upstreamFlags() {
      return UpstreamFlags.pflag("Demo").value("--port");
    }
  }

  @Test
  void aFlagCannotBeBothImplementedAndWithoutEffect() {
    assertThatThrownBy(() -> FlagForms.install(new CommandLine(new Clash())))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("--port");
  }

  @Test
  void upstreamFlagNamesAreCheckedWhenDeclared() {
    assertThatThrownBy(() -> UpstreamFlags.pflag("Demo").bool("-x")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> UpstreamFlags.pflag("Demo").bool("--x-y").value("--x-y"))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
