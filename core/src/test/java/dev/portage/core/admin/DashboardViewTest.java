package dev.portage.core.admin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class DashboardViewTest {

  @Test
  void keepsSectionsInTheOrderAdded() {
    DashboardView view = new DashboardView();
    view.fields("Summary").put("agents", 2).put("ready", true);
    view.table("Agents", "id", "draining").row("a1", false).row("a2", true);

    assertThat(JsonWriter.write(view.sections()))
        .isEqualTo(
            "[{\"title\":\"Summary\",\"fields\":{\"agents\":2,\"ready\":true}},"
                + "{\"title\":\"Agents\",\"columns\":[\"id\",\"draining\"],"
                + "\"rows\":[[\"a1\",false],[\"a2\",true]]}]");
  }

  @Test
  void rowsMayHoldNullCells() {
    DashboardView view = new DashboardView();
    view.table("T", "a", "b").row(null, "x");

    assertThat(view.sections().get(0).get("rows")).isEqualTo(List.of(java.util.Arrays.asList(null, "x")));
  }

  @Test
  void refusesARowWithTheWrongNumberOfCells() {
    DashboardView.Table table = new DashboardView().table("Agents", "id", "draining");

    assertThatThrownBy(() -> table.row("a1"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("table Agents: row of 1 cells (expected: 2)");
  }

  @Test
  void refusesDuplicateOrEmptyTitlesAndTablesWithoutColumns() {
    DashboardView view = new DashboardView();
    view.fields("Summary");

    assertThatThrownBy(() -> view.table("Summary", "a"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("title: duplicate section 'Summary'");
    assertThatThrownBy(() -> view.fields(""))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("title: '' (expected: non-empty)");
    assertThatThrownBy(() -> view.table("Empty"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("table Empty: 0 columns (expected: > 0)");
  }

  @Test
  void aFieldSetTwiceKeepsItsLastValue() {
    DashboardView view = new DashboardView();
    view.fields("S").put("n", 1).put("n", 2);

    assertThat(view.sections().get(0).get("fields")).isEqualTo(Map.of("n", 2));
  }
}
