package dev.portage.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class GoDurationTest {

  private final GoDuration d = new GoDuration();

  @Test
  void parsesGoSyntax() {
    assertThat(d.convert("0")).isZero();
    assertThat(d.convert("1h")).isEqualTo(Duration.ofHours(1));
    assertThat(d.convert("1m30s")).isEqualTo(Duration.ofSeconds(90));
    assertThat(d.convert("1.5s")).isEqualTo(Duration.ofMillis(1500));
    assertThat(d.convert("250ms")).isEqualTo(Duration.ofMillis(250));
    assertThat(d.convert("10us")).isEqualTo(Duration.ofNanos(10_000));
  }

  @Test
  void rejectsWhatGoRejectsWithTheExpectedForm() {
    assertThatThrownBy(() -> d.convert("10")).hasMessageContaining("'10' is not a duration");
    assertThatThrownBy(() -> d.convert("5 minutes")).hasMessageContaining("is not a duration");
    assertThatThrownBy(() -> d.convert("-1s")).hasMessageContaining("expected: Go syntax");
    assertThatThrownBy(() -> d.convert("")).hasMessageContaining("is not a duration");
  }
}
