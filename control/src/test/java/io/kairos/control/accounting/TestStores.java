package io.kairos.control.accounting;

import static org.assertj.core.api.Assertions.fail;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.Optional;
import java.util.Properties;
import java.util.UUID;
import org.junit.jupiter.api.Assumptions;

/**
 * The stores the accounting tests run against: the embedded SQLite one, and PostgreSQL at {@code
 * KAIROS_TEST_POSTGRES_URL} (a {@code postgresql://HOST:PORT/DB?user=NAME} URL; the password in
 * {@code KAIROS_TEST_POSTGRES_PASSWORD}), each test in a schema of its own. Without a reachable
 * server the PostgreSQL cases are skipped here, and FAIL in CI ({@code CI=true}): CI must run them.
 */
public final class TestStores {
  static final String URL_ENV = "KAIROS_TEST_POSTGRES_URL";
  static final String PASSWORD_ENV = "KAIROS_TEST_POSTGRES_PASSWORD";

  public enum Kind {
    SQLITE,
    POSTGRESQL
  }

  private TestStores() {}

  /** Settings for a fresh store of {@code kind}; SQLite lives in {@code dir}. */
  public static AccountingSettings settings(Kind kind) {
    if (kind == Kind.SQLITE) {
      return AccountingSettings.defaults();
    }
    String url = postgresUrlOrSkip();
    String schema = "t_" + UUID.randomUUID().toString().replace("-", "").substring(0, 16);
    try (Connection c = connect(url)) {
      c.createStatement().execute("CREATE SCHEMA " + schema);
    } catch (SQLException e) {
      throw new AssertionError("cannot create schema " + schema + " at " + url, e);
    }
    String withSchema = url + (url.contains("?") ? "&" : "?") + "currentSchema=" + schema;
    return new AccountingSettings(
        Optional.of(withSchema),
        password(),
        AccountingSettings.DEFAULT_RETAIN,
        AccountingSettings.DEFAULT_RETAIN_COUNT);
  }

  static AccountingStore open(Kind kind, Path dir) throws Exception {
    return AccountingStore.open(settings(kind), dir);
  }

  public static Optional<String> password() {
    return Optional.ofNullable(System.getenv(PASSWORD_ENV));
  }

  /** The server's URL; skips (or, in CI, fails) the test when there is none or it is down. */
  static String postgresUrlOrSkip() {
    String url = System.getenv(URL_ENV);
    boolean ci = "true".equalsIgnoreCase(System.getenv("CI"));
    if (url == null || url.isBlank()) {
      if (ci) {
        fail(URL_ENV + " is not set: CI must run the accounting store's tests on PostgreSQL");
      }
      Assumptions.abort(URL_ENV + " is not set: PostgreSQL cases skipped outside CI");
    }
    try (Connection c = connect(url)) {
      c.isValid(2);
    } catch (SQLException e) {
      if (ci) {
        fail("PostgreSQL at " + url + " is unreachable in CI: " + e.getMessage());
      }
      Assumptions.abort("PostgreSQL at " + url + " is unreachable: " + e.getMessage());
    }
    return url;
  }

  public static Connection connect(String url) throws SQLException {
    var props = new Properties();
    password().ifPresent(p -> props.setProperty("password", p));
    return DriverManager.getConnection(AccountingSettings.jdbcUrl(url), props);
  }
}
