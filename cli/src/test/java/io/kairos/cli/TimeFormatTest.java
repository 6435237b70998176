package io.kairos.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;

/** Times, ages and elapsed times as the tables show them; the table layout itself. */
class TimeFormatTest {
  private static final Instant NOW = Instant.parse("2026-03-28T12:00:00Z");

  @Test
  void agesUseTheLargestWholeUnit() {
    assertThat(TimeFormat.age(Duration.ofSeconds(5))).isEqualTo("5s");
    assertThat(TimeFormat.age(Duration.ofSeconds(59))).isEqualTo("59s");
    assertThat(TimeFormat.age(Duration.ofSeconds(60))).isEqualTo("1m");
    assertThat(TimeFormat.age(Duration.ofMinutes(3).plusSeconds(59))).isEqualTo("3m");
    assertThat(TimeFormat.age(Duration.ofHours(2))).isEqualTo("2h");
    assertThat(TimeFormat.age(Duration.ofDays(4).plusHours(23))).isEqualTo("4d");
    assertThat(TimeFormat.age(Duration.ofSeconds(-3))).isEqualTo("0s");
  }

  @Test
  void todayIsAClockTimeOtherDaysADate() {
    assertThat(TimeFormat.compact("2026-03-28T08:01:02Z", NOW, ZoneOffset.UTC))
        .isEqualTo("08:01:02");
    assertThat(TimeFormat.compact("2026-03-27T23:59:00Z", NOW, ZoneOffset.UTC))
        .isEqualTo("03-27 23:59");
    assertThat(TimeFormat.compact(null, NOW, ZoneOffset.UTC)).isEqualTo("-");
    assertThat(TimeFormat.compact("not a time", NOW, ZoneOffset.UTC)).isEqualTo("-");
  }

  @Test
  void theLocalZoneDecidesWhatTodayIs() {
    ZoneId tokyo = ZoneId.of("Asia/Tokyo"); // NOW is 21:00 on the 28th there
    assertThat(TimeFormat.compact("2026-03-27T23:59:00Z", NOW, tokyo)).isEqualTo("08:59:00");
    assertThat(TimeFormat.full("2026-03-27T23:59:00Z", tokyo)).isEqualTo("2026-03-28 08:59:00");
  }

  @Test
  void elapsedLikeSacct() {
    assertThat(TimeFormat.elapsed(Duration.ofSeconds(5))).isEqualTo("0:00:05");
    assertThat(TimeFormat.elapsed(Duration.ofSeconds(3725))).isEqualTo("1:02:05");
    assertThat(TimeFormat.elapsed(Duration.ofDays(2).plusSeconds(3725))).isEqualTo("2-01:02:05");
    assertThat(TimeFormat.elapsed("2026-03-28T10:00:00Z", "2026-03-28T10:00:30Z"))
        .isEqualTo("0:00:30");
    assertThat(TimeFormat.elapsed(null, "2026-03-28T10:00:30Z")).isEqualTo("-");
  }

  @Test
  void tableColumnsAlignWithoutTrailingBlanks() {
    var out = new StringWriter();
    new Table("ID", "NAME", "REASON")
        .row(1, "a-long-name", null)
        .row(1234, "b", "WAIT")
        .print(new PrintWriter(out));
    assertThat(out.toString().lines())
        .containsExactly(
            "ID    NAME         REASON", "1     a-long-name", "1234  b            WAIT");
  }
}
