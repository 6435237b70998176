package io.kairos.control.accounting;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * {@code --accounting}: SQLite by default, PostgreSQL by URL, never a password on the command line.
 */
class AccountingSettingsTest {
  @Test
  void sqliteIsTheDefault() {
    for (String s : new String[] {null, "", "sqlite", " SQLite "}) {
      assertThat(AccountingSettings.parse(s, Optional.empty(), Optional.empty()).isEmbedded())
          .isTrue();
    }
  }

  @Test
  void aPostgresUrlBecomesJdbcWithItsUserAndThePasswordFromTheFileFirst() {
    var s =
        AccountingSettings.parse(
            "postgresql://db.example:5433/kairos?user=kairos&sslmode=require",
            Optional.of("from-file"),
            Optional.of("from-env"));
    assertThat(s.isEmbedded()).isFalse();
    assertThat(s.password()).contains("from-file");
    assertThat(AccountingSettings.jdbcUrl(s.postgresUrl().orElseThrow()))
        .isEqualTo("jdbc:postgresql://db.example:5433/kairos?user=kairos&sslmode=require");
    assertThat(AccountingSettings.jdbcUrl("postgres://kairos@db/acct"))
        .isEqualTo("jdbc:postgresql://db/acct?user=kairos");
    assertThat(
            AccountingSettings.parse("postgresql://db/k", Optional.empty(), Optional.of("env"))
                .password())
        .contains("env");
  }

  @Test
  void aPasswordOnTheCommandLineIsRefusedNamingTheFix() {
    for (String url :
        new String[] {
          "postgresql://kairos:hunter2@db/kairos", "postgresql://db/kairos?user=k&password=hunter2"
        }) {
      assertThatThrownBy(() -> AccountingSettings.parse(url, Optional.empty(), Optional.empty()))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("must not carry a password")
          .hasMessageContaining("--accounting-password-file")
          .hasMessageNotContaining("hunter2");
    }
  }

  @Test
  void anErrorNeverEchoesAPassword() {
    assertThatThrownBy(
            () ->
                AccountingSettings.parse(
                    "mysql://root:hunter2@db/k?password=hunter2",
                    Optional.empty(),
                    Optional.empty()))
        .hasMessageContaining("mysql://root:***@db")
        .hasMessageNotContaining("hunter2");
    assertThatThrownBy(
            () ->
                AccountingSettings.parse(
                    "postgresql://u:hun ter2@db/k", Optional.empty(), Optional.empty()))
        .hasMessageNotContaining("hunter2")
        .hasMessageNotContaining("hun ter2");
  }

  @Test
  void otherStoresAndIncompleteUrlsAreRefused() {
    assertThatThrownBy(
            () -> AccountingSettings.parse("mysql://db/k", Optional.empty(), Optional.empty()))
        .hasMessageContaining("--accounting must be sqlite or a postgresql:// URL");
    assertThatThrownBy(
            () -> AccountingSettings.parse("postgresql://db", Optional.empty(), Optional.empty()))
        .hasMessageContaining("needs a host and a database");
  }

  @Test
  void retentionIsBounded() {
    assertThatThrownBy(() -> AccountingSettings.defaults().withRetention(Duration.ofDays(8), 0))
        .hasMessageContaining("--retain-finished");
    assertThatThrownBy(() -> AccountingSettings.defaults().withRetention(Duration.ZERO, -1))
        .hasMessageContaining("--retain-finished-count");
  }
}
