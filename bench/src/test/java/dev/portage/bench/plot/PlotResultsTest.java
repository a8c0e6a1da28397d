package dev.portage.bench.plot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PlotResultsTest {
  @TempDir Path tmp;

  private static final String TUNNEL = """
      # title: Tunnel throughput
      # y: Gbit/s (higher is better)
      # note: load average 9.7
      route,1 stream,32 streams
      Portage HTTP CONNECT,0.96,1.17
      ssh -L,0.97,0.61
      """;

  @Test
  void readsMetadataCategoriesAndSeriesInFileOrder() throws IOException {
    ResultTable t = ResultTable.read(write("tunnel.csv", TUNNEL));

    assertThat(t.name()).isEqualTo("tunnel");
    assertThat(t.title()).isEqualTo("Tunnel throughput");
    assertThat(t.yAxis()).isEqualTo("Gbit/s (higher is better)");
    assertThat(t.categories()).containsExactly("Portage HTTP CONNECT", "ssh -L");
    assertThat(t.series()).containsOnlyKeys("1 stream", "32 streams");
    assertThat(t.series().keySet()).containsExactly("1 stream", "32 streams");
    assertThat(t.series().get("32 streams")).containsExactly(1.17, 0.61);
  }

  @Test
  void writesOnePngPerCsv() throws IOException {
    Path results = Files.createDirectories(tmp.resolve("results"));
    Files.writeString(results.resolve("tunnel.csv"), TUNNEL);
    Files.writeString(results.resolve("other.csv"), "path,req/s\nPortage,35387\nHAProxy,35331\n");
    Files.writeString(results.resolve("README.md"), "not a table");

    List<Path> written = PlotResults.plotAll(results, tmp.resolve("img"));

    assertThat(written).containsExactly(tmp.resolve("img/other.png"), tmp.resolve("img/tunnel.png"));
    BufferedImage png = ImageIO.read(tmp.resolve("img/tunnel.png").toFile());
    assertThat(png.getWidth()).isEqualTo(1000);
    assertThat(png.getHeight()).isEqualTo(480);
  }

  @Test
  void aNoteWiderThanThePlotWidensTheImageInsteadOfBeingCut() throws IOException {
    String note = "2026-11-30 00:38 UTC, load 3.33 -> 4.00; 10 s per run after warm-up, medians of 5 rounds;"
        + " goal: Portage <= nginx at -c50, <= 1.2x at -c200";
    Path results = Files.createDirectories(tmp.resolve("results"));
    Files.writeString(results.resolve("long.csv"), TUNNEL.replace("load average 9.7", note));

    PlotResults.plotAll(results, tmp.resolve("img"));

    BufferedImage png = ImageIO.read(tmp.resolve("img/long.png").toFile());
    assertThat(png.getWidth()).isGreaterThan(1000);
    // the note is the dark text along the bottom edge: it starts and ends inside the image
    int left = png.getWidth();
    int right = -1;
    for (int y = png.getHeight() - 30; y < png.getHeight(); y++) {
      for (int x = 0; x < png.getWidth(); x++) {
        int rgb = png.getRGB(x, y);
        if (((rgb >> 16) & 0xff) + ((rgb >> 8) & 0xff) + (rgb & 0xff) < 3 * 100) {
          left = Math.min(left, x);
          right = Math.max(right, x);
        }
      }
    }
    assertThat(right).as("note drawn").isPositive();
    assertThat(left).isGreaterThan(20);
    assertThat(right).isLessThan(png.getWidth() - 20);
  }

  @Test
  void aBadCsvFailsWithFileAndLineAndWritesNoImage() throws IOException {
    Path results = Files.createDirectories(tmp.resolve("results"));
    Files.writeString(results.resolve("a-good.csv"), TUNNEL);
    Files.writeString(results.resolve("b-bad.csv"), "route,Gbit/s\nPortage,1.2 Gbit/s\n");

    assertThatThrownBy(() -> PlotResults.plotAll(results, tmp.resolve("img")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("b-bad.csv:2: '1.2 Gbit/s' in column 'Gbit/s' is not a number");
    assertThat(tmp.resolve("img/a-good.png")).doesNotExist();
  }

  @Test
  void aRowWithTheWrongNumberOfCellsIsRefused() throws IOException {
    Path csv = write("t.csv", "route,p50,p99\nPortage,3.4\n");

    assertThatThrownBy(() -> ResultTable.read(csv))
        .hasMessageContaining("t.csv:2: 2 cells (expected: 3, as in the header [route, p50, p99])");
  }

  @Test
  void negativeOrMissingDataIsRefused() throws IOException {
    assertThatThrownBy(() -> ResultTable.read(write("n.csv", "route,v\nx,-1\n"))).hasMessageContaining("n.csv:2: -1.0 in column 'v' (expected: >= 0)");
    assertThatThrownBy(() -> ResultTable.read(write("e.csv", "# title: t\n"))).hasMessageContaining("e.csv: no data rows");
    assertThatThrownBy(() -> ResultTable.read(write("d.csv", "route,v,v\nx,1,2\n"))).hasMessageContaining("d.csv:1: series name 'v' is empty or repeated");
    assertThatThrownBy(() -> ResultTable.read(write("m.csv", "# no colon here\nroute,v\nx,1\n"))).hasMessageContaining("m.csv:1: '# no colon here' (expected: # key: value)");
  }

  @Test
  void anEmptyResultsDirectoryIsAnError() throws IOException {
    Path empty = Files.createDirectories(tmp.resolve("empty"));

    assertThatThrownBy(() -> PlotResults.plotAll(empty, tmp.resolve("img"))).hasMessageContaining("no .csv files");
  }

  /** The recorded results the docs' plots are regenerated from all parse. */
  @Test
  void theRecordedResultsInDocsParse() throws IOException {
    Path docs = Path.of("").toAbsolutePath().getParent().resolve("docs/bench-results");
    List<Path> csvs;
    try (Stream<Path> list = Files.list(docs)) {
      csvs = list.filter(p -> p.toString().endsWith(".csv")).toList();
    }

    assertThat(csvs).isNotEmpty();
    for (Path csv : csvs) {
      assertThat(ResultTable.read(csv).categories()).as(csv.toString()).isNotEmpty();
    }
  }

  private Path write(String name, String text) throws IOException {
    return Files.writeString(tmp.resolve(name), text);
  }
}
