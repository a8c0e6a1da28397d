package dev.portage.bench.plot;

import java.awt.Color;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.style.CategoryStyler;
import org.knowm.xchart.style.Styler;

/**
 * Renders every CSV in a results directory (docs/bench-results/) as a PNG bar chart in an image
 * directory (docs/img/): {@code java -Djava.awt.headless=true -cp bench/target/benchmarks.jar
 * dev.portage.bench.plot.PlotResults docs/bench-results docs/img}. Single-threaded; runs once.
 */
public final class PlotResults {
  private static final int WIDTH = 1000;
  private static final int HEIGHT = 480;

  /** The legend's box, marker and paddings around its longest series name, in pixels. */
  private static final int LEGEND_FRAME = 70;

  /** The y axis's title, tick labels and the chart's paddings left of the plot area, in pixels. */
  private static final int Y_AXIS_ALLOWANCE = 110;

  /** Series colours, in header order: Portage first in every CSV, so it is always the same blue. */
  private static final Color[] PALETTE = {
    new Color(0x1f77b4), new Color(0xff7f0e), new Color(0x2ca02c), new Color(0xd62728), new Color(0x9467bd),
    new Color(0x8c564b)
  };

  private PlotResults() {}

  public static void main(String[] args) throws IOException {
    if (args.length != 2) {
      System.err.println("usage: PlotResults <results-dir with *.csv> <image-dir>");
      System.exit(2);
    }
    System.setProperty("java.awt.headless", "true");
    try {
      List<Path> written = plotAll(Path.of(args[0]), Path.of(args[1]));
      written.forEach(p -> System.out.println("wrote " + p));
    } catch (IllegalArgumentException e) {
      System.err.println("PlotResults: " + e.getMessage());
      System.exit(2);
    }
  }

  /** Plots each {@code *.csv} of {@code resultsDir} into {@code imageDir}/{@code <name>.png}; returns the files written. */
  public static List<Path> plotAll(Path resultsDir, Path imageDir) throws IOException {
    if (!Files.isDirectory(resultsDir)) {
      throw new IllegalArgumentException(resultsDir + ": not a directory");
    }
    List<Path> csvs;
    try (Stream<Path> list = Files.list(resultsDir)) {
      csvs = list.filter(p -> p.toString().endsWith(".csv")).sorted().toList();
    }
    if (csvs.isEmpty()) {
      throw new IllegalArgumentException(resultsDir + ": no .csv files");
    }
    Files.createDirectories(imageDir);
    List<ResultTable> tables = new ArrayList<>();
    for (Path csv : csvs) {
      tables.add(ResultTable.read(csv)); // all parse before any image is written
    }
    List<Path> written = new ArrayList<>();
    for (ResultTable t : tables) {
      Path png = imageDir.resolve(t.name() + ".png");
      BitmapEncoder.saveBitmap(chart(t), png.toString(), BitmapEncoder.BitmapFormat.PNG);
      written.add(png);
    }
    return written;
  }

  static CategoryChart chart(ResultTable t) {
    String note = t.meta().getOrDefault("note", "");
    CategoryChart chart = new CategoryChartBuilder()
        .width(Math.max(WIDTH, widthFor(note, t.series().keySet())))
        .height(HEIGHT)
        .title(t.title())
        .yAxisTitle(t.yAxis())
        .xAxisTitle(note)
        .build();
    CategoryStyler styler = chart.getStyler();
    styler.setChartBackgroundColor(Color.WHITE);
    styler.setLegendPosition(Styler.LegendPosition.OutsideE);
    styler.setSeriesColors(PALETTE);
    styler.setDecimalPattern("#,##0.##");
    // the value on each bar: readers compare numbers, not bar heights
    styler.setLabelsVisible(true);
    styler.setLabelsFontColorAutomaticEnabled(false);
    styler.setLabelsFontColor(Color.DARK_GRAY);
    styler.setOverlapped(false);
    for (Map.Entry<String, List<Double>> s : t.series().entrySet()) {
      chart.addSeries(s.getKey(), t.categories(), s.getValue());
    }
    return chart;
  }

  /**
   * The image width at which {@code note}, drawn centred under the plot area (which the legend and
   * the y axis narrow), is not cut at both ends; measured with the default styler's fonts.
   */
  private static int widthFor(String note, Iterable<String> seriesNames) {
    CategoryStyler defaults = new CategoryStyler();
    Graphics2D g = new BufferedImage(1, 1, BufferedImage.TYPE_INT_RGB).createGraphics();
    try {
      FontMetrics legend = g.getFontMetrics(defaults.getLegendFont());
      int widestName = 0;
      for (String name : seriesNames) {
        widestName = Math.max(widestName, legend.stringWidth(name));
      }
      return g.getFontMetrics(defaults.getAxisTitleFont()).stringWidth(note)
          + widestName + LEGEND_FRAME + Y_AXIS_ALLOWANCE;
    } finally {
      g.dispose();
    }
  }
}
