package io.kairos.control.accounting;

import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;

/**
 * Where ended jobs are kept and how long the replicated state keeps them first.
 *
 * @param postgresUrl empty for the embedded SQLite store (a file in the data directory); else a
 *     {@code postgresql://HOST[:PORT]/DATABASE[?user=NAME]} URL without a password
 * @param password the PostgreSQL password (read from a file or the environment, never from the
 *     command line); empty when the server needs none
 * @param retainFinished how long an ended job stays in the replicated state after it is in the
 *     store ({@code kairos show} and {@code --wait} read it there first)
 * @param retainFinishedCount at most this many ended jobs stay in the replicated state (the most
 *     recently ended), whatever their age
 */
public record AccountingSettings(
    Optional<String> postgresUrl,
    Optional<String> password,
    Duration retainFinished,
    long retainFinishedCount) {

  public static final Duration DEFAULT_RETAIN = Duration.ofMinutes(10);
  public static final long DEFAULT_RETAIN_COUNT = 10_000;

  /** The embedded store's file, in the controller's data directory. */
  public static final String SQLITE_FILE = "accounting.db";

  /** The environment variable the PostgreSQL password may come from. */
  public static final String PASSWORD_ENV = "KAIROS_ACCOUNTING_PASSWORD";

  public AccountingSettings {
    Objects.requireNonNull(postgresUrl, "postgresUrl");
    Objects.requireNonNull(password, "password");
    Objects.requireNonNull(retainFinished, "retainFinished");
    if (retainFinished.isNegative() || retainFinished.compareTo(Duration.ofDays(7)) > 0) {
      throw new IllegalArgumentException(
          "--retain-finished must be 0s to 168h (7 days), got " + retainFinished.toSeconds() + "s");
    }
    if (retainFinishedCount < 0 || retainFinishedCount > 10_000_000) {
      throw new IllegalArgumentException(
          "--retain-finished-count must be 0 to 10000000, got " + retainFinishedCount);
    }
    postgresUrl.ifPresent(AccountingSettings::jdbcUrl);
  }

  /** SQLite in the data directory, ended jobs kept 10 minutes (at most 10,000) in the state. */
  public static AccountingSettings defaults() {
    return new AccountingSettings(
        Optional.empty(), Optional.empty(), DEFAULT_RETAIN, DEFAULT_RETAIN_COUNT);
  }

  public AccountingSettings withRetention(Duration retain, long count) {
    return new AccountingSettings(postgresUrl, password, retain, count);
  }

  /**
   * The store {@code --accounting} names: {@code sqlite} (the default) or a PostgreSQL URL; the
   * password comes from {@code passwordFile} when given, else from {@link #PASSWORD_ENV}.
   *
   * @throws IllegalArgumentException naming the option and the fix
   */
  public static AccountingSettings parse(
      String accounting, Optional<String> passwordFromFile, Optional<String> passwordFromEnv) {
    var base = defaults();
    if (accounting == null
        || accounting.isBlank()
        || accounting.strip().toLowerCase(Locale.ROOT).equals("sqlite")) {
      return base;
    }
    String url = accounting.strip();
    Optional<String> password = passwordFromFile.or(() -> passwordFromEnv);
    return new AccountingSettings(
        Optional.of(url), password, base.retainFinished(), base.retainFinishedCount());
  }

  public boolean isEmbedded() {
    return postgresUrl.isEmpty();
  }

  /** The JDBC URL of a PostgreSQL URL; refuses one that carries a password. */
  static String jdbcUrl(String url) {
    String fix =
        "write --accounting postgresql://HOST[:PORT]/DATABASE[?user=NAME] and give the password"
            + " in a file (--accounting-password-file) or $"
            + PASSWORD_ENV;
    String rest;
    if (url.startsWith("postgresql://")) {
      rest = url.substring("postgresql://".length());
    } else if (url.startsWith("postgres://")) {
      rest = url.substring("postgres://".length());
    } else if (url.startsWith("jdbc:postgresql://")) {
      rest = url.substring("jdbc:postgresql://".length());
    } else {
      throw new IllegalArgumentException(
          "--accounting must be sqlite or a postgresql:// URL, got '" + clip(url) + "'; " + fix);
    }
    URI uri;
    try {
      uri = new URI("postgresql://" + rest);
    } catch (URISyntaxException e) {
      throw new IllegalArgumentException(
          "--accounting is not a URL (" + e.getReason() + "); " + fix);
    }
    String query = uri.getRawQuery() == null ? "" : uri.getRawQuery();
    if ((uri.getRawUserInfo() != null && uri.getRawUserInfo().contains(":"))
        || ("&" + query.toLowerCase(Locale.ROOT)).contains("&password=")) {
      throw new IllegalArgumentException(
          "--accounting must not carry a password (the command line shows in ps); " + fix);
    }
    if (uri.getHost() == null || uri.getPath() == null || uri.getPath().length() < 2) {
      throw new IllegalArgumentException(
          "--accounting needs a host and a database, got '" + clip(url) + "'; " + fix);
    }
    String user = uri.getRawUserInfo();
    String jdbc =
        "jdbc:postgresql://"
            + uri.getHost()
            + (uri.getPort() > 0 ? ":" + uri.getPort() : "")
            + uri.getRawPath()
            + (query.isEmpty() ? "" : "?" + query);
    if (user != null && !user.isEmpty()) {
      jdbc += (query.isEmpty() ? "?" : "&") + "user=" + user;
    }
    return jdbc;
  }

  /** Where the store is, for logs and errors (no password: the URL never holds one). */
  public String describe(Path dataDir) {
    return postgresUrl.map(u -> u).orElse("sqlite " + dataDir.resolve(SQLITE_FILE));
  }

  /** For an error message: at most 80 characters, and a password that slipped in is masked. */
  private static String clip(String s) {
    String masked =
        s.replaceAll("//([^/@:]*):[^/@]*@", "//$1:***@")
            .replaceAll("(?i)(password=)[^&]*", "$1***");
    return masked.length() > 80 ? masked.substring(0, 80) + "..." : masked;
  }
}
