package dev.portage.core.admin;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class JsonWriterTest {

  @Test
  void writesScalarsMapsListsAndArrays() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("s", "x");
    m.put("i", 42);
    m.put("l", 1L << 40);
    m.put("d", 2.5);
    m.put("whole", 3.0);
    m.put("b", true);
    m.put("n", null);
    m.put("list", List.of(1, "a"));
    m.put("array", new int[] {1, 2});
    m.put("nested", Map.of("k", false));

    assertThat(JsonWriter.write(m))
        .isEqualTo(
            "{\"s\":\"x\",\"i\":42,\"l\":1099511627776,\"d\":2.5,\"whole\":3,\"b\":true,\"n\":null,"
                + "\"list\":[1,\"a\"],\"array\":[1,2],\"nested\":{\"k\":false}}");
  }

  @Test
  void escapesQuotesControlCharactersAndMarkup() {
    assertThat(JsonWriter.write("a\"b\\c\nd\u0001</script>"))
        .isEqualTo("\"a\\\"b\\\\c\\nd\\u0001\\u003c/script>\"");
  }

  @Test
  void nonFiniteNumbersBecomeStringsBecauseJsonHasNoSuchNumbers() {
    assertThat(JsonWriter.write(Arrays.asList(Double.NaN, Double.POSITIVE_INFINITY)))
        .isEqualTo("[\"NaN\",\"Infinity\"]");
  }

  @Test
  void otherObjectsAreWrittenAsTheirStringForm() {
    assertThat(JsonWriter.write(java.time.Duration.ofSeconds(5))).isEqualTo("\"PT5S\"");
  }

  @Test
  void outputParsesBackToTheSameValues() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("text", "tab\t \"quoted\" \u2028 <b>");
    m.put("list", List.of(1L, 2.5, true));
    assertThat(DashboardJson.parseValue(JsonWriter.write(m))).isEqualTo(m);
  }
}
