package io.kairos.sim.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class SvgTest {
  @Test
  void escapesMarkupQuotesAndAmpersands() {
    assertThat(Svg.escape("<q a=\"1\">Tom & Jerry's</q>"))
        .isEqualTo("&lt;q a=&quot;1&quot;&gt;Tom &amp; Jerry&#39;s&lt;/q&gt;");
  }

  @Test
  void returnsPlainTextUnchanged() {
    String plain = "research-vc 7";
    assertThat(Svg.escape(plain)).isSameAs(plain);
  }

  @Test
  void replacesControlCharactersThatXmlForbids() {
    assertThat(Svg.escape("a\u0001b\tc\nd")).isEqualTo("a\uFFFDb\tc\nd");
  }

  @Test
  void coordinatesHaveOneDecimalAndNoNegativeZero() {
    assertThat(Svg.coord(12.0)).isEqualTo("12");
    assertThat(Svg.coord(12.34)).isEqualTo("12.3");
    assertThat(Svg.coord(-0.04)).isEqualTo("0");
    assertThat(Svg.coord(-1.25)).isEqualTo("-1.2");
    assertThat(Svg.coord(-0.5)).isEqualTo("-0.5");
    assertThatThrownBy(() -> Svg.coord(Double.NaN)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void numbersIgnoreTheDefaultLocale() {
    var saved = java.util.Locale.getDefault();
    try {
      java.util.Locale.setDefault(java.util.Locale.GERMANY);
      assertThat(Svg.fixed(1234.5, 1)).isEqualTo("1234.5");
      assertThat(Svg.grouped(1234567)).isEqualTo("1,234,567");
      assertThat(Svg.percent(0.4567)).isEqualTo("45.7%");
      assertThat(Svg.fixed(-0.001, 1)).isEqualTo("0.0");
    } finally {
      java.util.Locale.setDefault(saved);
    }
  }

  @Test
  void slugsAreIdSafe() {
    assertThat(Svg.slug("Queue <A> & b")).isEqualTo("queue-a-b");
    assertThat(Svg.slug("***")).isEqualTo("x");
  }
}
