package dev.portage.bench.plot;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One recorded comparison read from a CSV file in docs/bench-results/ (format in that directory's
 * README.md): {@code # key: value} lines (title, y, note), then a header row
 * {@code category,<series>,<series>...} and one row per category with a number per series.
 * Immutable once parsed.
 *
 * @param name the file name without {@code .csv}; the chart is written as {@code <name>.png}
 * @param meta the {@code # key: value} lines, in order
 * @param categories the first column, top to bottom (the bar groups)
 * @param series series name to one value per category (the bars of each group)
 */
public record ResultTable(String name, Map<String, String> meta, List<String> categories, Map<String, List<Double>> series) {

  public String title() {
    return meta.getOrDefault("title", name);
  }

  public String yAxis() {
    return meta.getOrDefault("y", "");
  }

  /** Parses {@code file}; a malformed file fails with its name, line and what was expected. */
  public static ResultTable read(Path file) throws IOException {
    String fileName = file.getFileName().toString();
    if (!fileName.endsWith(".csv")) {
      throw new IllegalArgumentException(file + ": not a .csv file");
    }
    Map<String, String> meta = new LinkedHashMap<>();
    List<String> header = null;
    List<String> categories = new ArrayList<>();
    Map<String, List<Double>> series = new LinkedHashMap<>();
    List<String> lines = Files.readAllLines(file);
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i).strip();
      String where = file + ":" + (i + 1);
      if (line.isEmpty()) {
        continue;
      }
      if (line.startsWith("#")) {
        int colon = line.indexOf(':');
        if (colon < 0) {
          throw new IllegalArgumentException(where + ": '" + line + "' (expected: # key: value)");
        }
        meta.put(line.substring(1, colon).strip(), line.substring(colon + 1).strip());
        continue;
      }
      List<String> cells = List.of(line.split(",", -1)).stream().map(String::strip).toList();
      if (header == null) {
        if (cells.size() < 2) {
          throw new IllegalArgumentException(where + ": header '" + line + "' (expected: category,<series>[,<series>...])");
        }
        header = cells;
        for (String s : cells.subList(1, cells.size())) {
          if (s.isEmpty() || series.putIfAbsent(s, new ArrayList<>()) != null) {
            throw new IllegalArgumentException(where + ": series name '" + s + "' is empty or repeated");
          }
        }
        continue;
      }
      if (cells.size() != header.size()) {
        throw new IllegalArgumentException(where + ": " + cells.size() + " cells (expected: " + header.size()
            + ", as in the header " + header + ")");
      }
      categories.add(cells.get(0));
      for (int c = 1; c < cells.size(); c++) {
        double value;
        try {
          value = Double.parseDouble(cells.get(c));
        } catch (NumberFormatException e) {
          throw new IllegalArgumentException(where + ": '" + cells.get(c) + "' in column '" + header.get(c)
              + "' is not a number (expected: a plain decimal such as 0.96; no units, no thousands separators)", e);
        }
        if (!Double.isFinite(value) || value < 0) {
          throw new IllegalArgumentException(where + ": " + value + " in column '" + header.get(c) + "' (expected: >= 0)");
        }
        series.get(header.get(c)).add(value);
      }
    }
    if (header == null || categories.isEmpty()) {
      throw new IllegalArgumentException(file + ": no data rows (expected: a header row and at least one row)");
    }
    Map<String, List<Double>> frozen = new LinkedHashMap<>();
    series.forEach((k, v) -> frozen.put(k, List.copyOf(v)));
    return new ResultTable(fileName.substring(0, fileName.length() - 4), Map.copyOf(meta), List.copyOf(categories),
        Collections.unmodifiableMap(frozen));
  }
}
