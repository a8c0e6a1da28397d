package dev.portage.core.admin;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * The sections a {@link DashboardSource} fills for one {@code /dashboard/state} answer: each is
 * either name/value {@linkplain #fields fields} or a {@linkplain #table table} with fixed columns,
 * shown in the order added. Values are plain Java values (strings, numbers, booleans, null, lists,
 * maps); anything else is shown as its {@code toString()}. Not thread-safe: one view per request,
 * filled on the admin server's event loop.
 */
public final class DashboardView {

  private final List<Map<String, Object>> sections = new ArrayList<>();
  private final Set<String> titles = new HashSet<>();

  DashboardView() {}

  /**
   * Adds a section of name/value pairs.
   *
   * @throws IllegalArgumentException if the title is empty or already used in this view
   */
  public Fields fields(String title) {
    Map<String, Object> values = new LinkedHashMap<>();
    section(title).put("fields", values);
    return new Fields(values);
  }

  /**
   * Adds a table section with {@code columns}, to be filled with {@link Table#row}.
   *
   * @throws IllegalArgumentException if the title is empty or already used, or there are no
   *     columns
   */
  public Table table(String title, String... columns) {
    Objects.requireNonNull(columns, "columns");
    if (columns.length == 0) {
      throw new IllegalArgumentException("table " + title + ": 0 columns (expected: > 0)");
    }
    for (String c : columns) {
      Objects.requireNonNull(c, "column");
    }
    List<List<Object>> rows = new ArrayList<>();
    Map<String, Object> section = section(title);
    section.put("columns", List.of(columns));
    section.put("rows", rows);
    return new Table(title, columns.length, rows);
  }

  private Map<String, Object> section(String title) {
    Objects.requireNonNull(title, "title");
    if (title.isEmpty()) {
      throw new IllegalArgumentException("title: '' (expected: non-empty)");
    }
    if (!titles.add(title)) {
      throw new IllegalArgumentException("title: duplicate section '" + title + "'");
    }
    Map<String, Object> section = new LinkedHashMap<>();
    section.put("title", title);
    sections.add(section);
    return section;
  }

  /** The sections in JSON-ready form, in the order added. */
  List<Map<String, Object>> sections() {
    return sections;
  }

  /** Name/value pairs of one section; a name given twice keeps its last value. */
  public static final class Fields {
    private final Map<String, Object> values;

    private Fields(Map<String, Object> values) {
      this.values = values;
    }

    /** Sets field {@code name} to {@code value} (may be null). */
    public Fields put(String name, Object value) {
      values.put(Objects.requireNonNull(name, "name"), value);
      return this;
    }
  }

  /** Rows of one table section. */
  public static final class Table {
    private final String title;
    private final int columns;
    private final List<List<Object>> rows;

    private Table(String title, int columns, List<List<Object>> rows) {
      this.title = title;
      this.columns = columns;
      this.rows = rows;
    }

    /**
     * Appends a row; cells may be null.
     *
     * @throws IllegalArgumentException if the cell count differs from the column count
     */
    public Table row(Object... cells) {
      if (cells.length != columns) {
        throw new IllegalArgumentException(
            "table " + title + ": row of " + cells.length + " cells (expected: " + columns + ")");
      }
      rows.add(Arrays.asList(cells.clone()));
      return this;
    }
  }
}
