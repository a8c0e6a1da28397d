package dev.portage.cli.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.portage.cli.PortageCommand;
import dev.portage.cli.flags.KlogOptions;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/** Every flag of every subcommand is documented on its component's page in docs/. */
class DocsFlagCoverageTest {
  private static final Path ROOT = RepoRoot.find();

  /** The long names of klog's flags, shared by every command that mixes them in. */
  private static final Set<String> KLOG = CommandSpec.forAnnotatedObject(new KlogOptions()).options().stream()
      .map(OptionSpec::longestName).collect(Collectors.toSet());

  /** The page that documents each subcommand's flags. */
  static final Map<String, String> PAGES = Map.of(
      "server", "docs/tunnel.md",
      "agent", "docs/tunnel.md",
      "control-plane", "docs/control-plane.md",
      "service-proxy", "docs/service-proxy.md",
      "sidecar", "docs/sidecar.md",
      "hub", "docs/hub.md",
      "quickstart", "docs/core.md");

  @Test
  void everySubcommandHasAPage() {
    assertThat(PAGES.keySet()).containsExactlyInAnyOrderElementsOf(PortageCommand.commandLine().getSubcommands().keySet());
  }

  @ParameterizedTest(name = "portage {0}")
  @ValueSource(strings = {"server", "agent", "control-plane", "service-proxy", "sidecar", "hub", "quickstart"})
  void everyFlagOfTheSubcommandIsOnItsPage(String subcommand) throws IOException {
    Path page = ROOT.resolve(PAGES.get(subcommand));
    CommandSpec spec = PortageCommand.commandLine().getSubcommands().get(subcommand).getCommandSpec();

    assertThat(undocumented(spec, Files.readString(page))).as("flags of 'portage %s' missing from %s", subcommand, page)
        .isEmpty();
  }

  @Test
  void klogsFlagsAreOnTheCorePage() throws IOException {
    String page = Files.readString(ROOT.resolve("docs/core.md"));
    assertThat(KLOG).as("klog flags missing from docs/core.md").allMatch(name -> documented(name, page));
  }

  @Test
  void theGlobalFlagsAreOnTheCorePage() throws IOException {
    CommandSpec top = PortageCommand.commandLine().getCommandSpec();

    assertThat(undocumented(top, Files.readString(ROOT.resolve("docs/core.md")))).isEmpty();
  }

  @Test
  void aMissingFlagIsNamed() {
    CommandSpec sidecar = PortageCommand.commandLine().getSubcommands().get("sidecar").getCommandSpec();

    assertThat(undocumented(sidecar, "| `--destination-addr HOST:PORT` | `--outbound-port` |"))
        .contains("--outbound-bind-address", "--balancer")
        .doesNotContain("--destination-addr", "--outbound-port");
  }

  /**
   * Option names not written on the page as {@code `--name`} (or {@code `--name=...`}, {@code `--name VALUE`},
   * {@code `--name[=...]`}). Help/version switches, options inherited from {@code portage}, klog's flags
   * (one mixin, documented once on the core page) and hidden options are skipped: hidden ones are
   * upstream flags Portage does not implement, absent from the usage help too (pages may list them).
   */
  static List<String> undocumented(CommandSpec spec, String page) {
    List<String> missing = new ArrayList<>();
    for (OptionSpec o : spec.options()) {
      if (o.usageHelp() || o.versionHelp() || o.inherited() || o.hidden() || KLOG.contains(o.longestName())) {
        continue;
      }
      for (String name : o.names()) {
        if (name.startsWith("--") && !documented(name, page)) {
          missing.add(name);
        }
      }
    }
    return missing;
  }

  /** Whether the page writes the flag as {@code `--name`}, {@code `--name=...`}, {@code `--name VALUE`} or {@code `--name[=...]`}. */
  private static boolean documented(String name, String page) {
    return Pattern.compile("`" + Pattern.quote(name) + "[`= \\[]").matcher(page).find();
  }
}
