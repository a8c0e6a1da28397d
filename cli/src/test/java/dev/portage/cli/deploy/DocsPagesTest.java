package dev.portage.cli.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * README.md and docs/ read as a manual: every relative link (images and {@code #anchor}s included)
 * resolves inside the repository, no page uses words about how the work was organised, and each
 * benchmark page stays a result page (under 250 lines).
 */
class DocsPagesTest {
  private static final Path ROOT = RepoRoot.find();
  static final int MAX_BENCHMARK_PAGE_LINES = 250;

  /** README.md and every Markdown file under docs/. */
  static List<Path> pages() throws IOException {
    List<Path> pages = new ArrayList<>();
    pages.add(ROOT.resolve("README.md"));
    try (Stream<Path> docs = Files.walk(ROOT.resolve("docs"))) {
      docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(pages::add);
    }
    return pages;
  }

  @Test
  void everyRelativeLinkResolves() throws IOException {
    List<String> broken = new ArrayList<>();
    for (Path page : pages()) {
      for (MarkdownPage.Link link : MarkdownPage.read(page).links()) {
        if (!MarkdownPage.isRelative(link.target())) {
          continue;
        }
        String problem = MarkdownPage.problem(ROOT, page, link.target());
        if (problem != null) {
          broken.add(ROOT.relativize(page) + ":" + link.line() + " (" + link.target() + "): " + problem);
        }
      }
    }
    assertThat(broken).as("relative links that do not resolve").isEmpty();
  }

  @Test
  void noPageUsesWordsAboutHowTheWorkWasOrganised() throws IOException {
    List<String> hits = new ArrayList<>();
    for (Path page : pages()) {
      for (ProcessWords.Hit hit : ProcessWords.find(Files.readAllLines(page))) {
        hits.add(ROOT.relativize(page) + " " + hit);
      }
    }
    assertThat(hits).as("say what the software does and what was measured instead").isEmpty();
  }

  @Test
  void everyBenchmarkPageIsAResultPage() throws IOException {
    List<String> tooLong = new ArrayList<>();
    try (Stream<Path> docs = Files.list(ROOT.resolve("docs"))) {
      for (Path page : docs.filter(p -> p.getFileName().toString().matches("benchmarks.*\\.md")).sorted().toList()) {
        int lines = Files.readAllLines(page).size();
        if (lines >= MAX_BENCHMARK_PAGE_LINES) {
          tooLong.add(ROOT.relativize(page) + ": " + lines + " lines");
        }
      }
    }
    assertThat(tooLong).as("benchmark pages of %d lines or more (history belongs in git and docs/bench-results)",
        MAX_BENCHMARK_PAGE_LINES).isEmpty();
  }

  @Test
  void theReadmeLinksTheArchitectureAndEveryComponentPage() throws IOException {
    String readme = Files.readString(ROOT.resolve("README.md"));

    assertThat(readme).contains("(docs/architecture.md)", "(docs/tunnel.md)", "(docs/hub.md)",
        "(docs/control-plane.md)", "(docs/service-proxy.md)", "(docs/sidecar.md)", "(docs/benchmarks.md)");
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"docs/tunnel.md", "docs/hub.md", "docs/service-proxy.md", "docs/sidecar.md",
      "docs/control-plane.md"})
  void everyComponentPageSaysHowToComeFromUpstream(String page) {
    assertThat(MarkdownPage.read(ROOT.resolve(page)).anchors()).contains("coming-from-upstream");
  }

  // ---- the checks themselves ----

  @Test
  void linksInProseAreFoundButNotThoseInCode() {
    MarkdownPage page = MarkdownPage.parse(String.join("\n",
        "See [the tunnel](tunnel.md#try-it) and ![plot](img/a.png \"title\").",
        "`[not a link](nowhere.md)` and",
        "```",
        "[nor this](nowhere.md)",
        "```",
        "[ref]: deploy.md",
        "[web](https://example.com/x.md)"));

    assertThat(page.links()).extracting(MarkdownPage.Link::target)
        .containsExactly("tunnel.md#try-it", "img/a.png", "deploy.md", "https://example.com/x.md");
    assertThat(page.links()).extracting(MarkdownPage.Link::line).containsExactly(1, 1, 6, 7);
    assertThat(MarkdownPage.isRelative("https://example.com/x.md")).isFalse();
    assertThat(MarkdownPage.isRelative("mailto:a@b")).isFalse();
    assertThat(MarkdownPage.isRelative("../README.md")).isTrue();
  }

  @Test
  void anchorsFollowGitHubsRules() {
    MarkdownPage page = MarkdownPage.parse(String.join("\n",
        "# Tunnel — Konnectivity-compatible",
        "## `portage quickstart`",
        "### Per-connection flow control and its overflow rule",
        "## Metrics",
        "## Metrics",
        "```",
        "# not a heading",
        "```"));

    assertThat(page.anchors()).containsExactly("tunnel--konnectivity-compatible", "portage-quickstart",
        "per-connection-flow-control-and-its-overflow-rule", "metrics", "metrics-1");
  }

  @Test
  void aBrokenLinkIsNamed() throws IOException {
    Path architecture = ROOT.resolve("docs/architecture.md");

    assertThat(MarkdownPage.problem(ROOT, architecture, "tunnel.md")).isNull();
    assertThat(MarkdownPage.problem(ROOT, architecture, "img/architecture.png")).isNull();
    assertThat(MarkdownPage.problem(ROOT, architecture, "#components")).isNull();
    assertThat(MarkdownPage.problem(ROOT, architecture, "notes/s13.md")).isEqualTo("no such file: docs/notes/s13.md");
    assertThat(MarkdownPage.problem(ROOT, architecture, "tunnel.md#no-such-heading"))
        .isEqualTo("no heading for #no-such-heading in docs/tunnel.md");
    assertThat(MarkdownPage.problem(ROOT, architecture, "../../shared/DESIGN.md")).isEqualTo("points outside the repository");
  }

  @ParameterizedTest(name = "caught: {0}")
  @ValueSource(strings = {
      "the lead's re-run decides",
      "run by the lead with nothing else running",
      "another helper's builds alongside",
      "five helpers share two cores",
      "a helper on the branch measured it",
      "after session 2's merges",
      "this session ran out of time",
      "stop 4 left it there",
      "quiet run 14 had",
      "see run 22",
      "runs 21–22 used the same command",
      "Run 6b: idle tunnels",
      "the quiet run above",
      "branch s13-direct-receive",
      "built from this branch",
      "merged main before the run",
      "the brief asked for it",
      "see docs/notes/s13-grpcgo-route.md",
      "What I did not do"})
  void processWordsAreCaught(String text) {
    assertThat(ProcessWords.find(text)).as(text).isNotEmpty();
  }

  @ParameterizedTest(name = "left alone: {0}")
  @ValueSource(strings = {
      "TLS session resumption saves a round trip",
      "sshd's session processes are not counted",
      "leader election picks one replica",
      "this would lead to a stall",
      "sessionAffinity: ClientIP",
      "a helper method in core",
      "test helpers start real servers",
      "the soak runs 8 workers",
      "three runs of 5 s each",
      "the benchmark runs 2 tunnel servers",
      "highest 1-min load during the run 45.35",
      "a brief pause of 2 ms",
      "Leading zeros are kept",
      "the kube-proxy sync runner",
      "stop the hub's upstream for 3-12 s"})
  void technicalWordsAreLeftAlone(String text) {
    assertThat(ProcessWords.find(text)).as(text).isEmpty();
  }
}
