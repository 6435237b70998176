package io.kairos.cli;

import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Option;
import picocli.CommandLine.TypeConversionException;

/**
 * The options every client command shares (a picocli mixin): where the controller is, the token to
 * present, and the output format. Also where the defaults come from when an option is absent.
 */
@Command(
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
      "0:done",
      "1:failed: no controller answered, or it refused (not found, conflict, forbidden,"
          + " server error)",
      "2:bad input: a wrong option or job file, or the controller said the request was invalid"
          + " (400/422)"
    })
final class ClientOptions {
  static final String DEFAULT_SERVER = "http://127.0.0.1:8080";

  /** How results are printed. */
  enum Output {
    TABLE,
    JSON,
    /** Comma-separated values, a header line first (history and report; others print a table). */
    CSV
  }

  @Option(
      names = "--server",
      paramLabel = "URL[,URL...]",
      description = {
        "Controller base URL; several, comma separated, are tried in order while one refuses"
            + " the connection.",
        "Default: $KAIROS_SERVER, else " + DEFAULT_SERVER + "."
      })
  String server;

  @Option(
      names = "--token",
      paramLabel = "TOKEN",
      description = {
        "Bearer token to present.",
        "Default: $KAIROS_TOKEN, else the file $KAIROS_DATA/admin.token (KAIROS_DATA defaults to"
            + " ~/.kairos, where `kairos up` writes it), else none."
      })
  String token;

  @Option(
      names = "--ca",
      paramLabel = "FILE",
      description = {
        "The cluster CA (PEM) the controller's HTTPS certificate must chain to; plain http://"
            + " is then refused.",
        "Default: $KAIROS_CA, else $KAIROS_DATA/ca.pem when it exists (with the JDK's CAs),"
            + " else the JDK's CAs."
      })
  Path ca;

  @Option(
      names = "--insecure",
      description =
          "Allow plain http:// to a controller off this machine, the token in clear"
              + " (also $KAIROS_INSECURE=1).")
  Boolean insecure;

  @Option(
      names = {"-o", "--output"},
      paramLabel = "table|json|csv",
      converter = OutputConverter.class,
      description =
          "table (for people; default), json (the server's reply, pretty-printed) or csv"
              + " (history and report).")
  Output output;

  /** Text to JSON or TABLE, in any case. */
  static final class OutputConverter implements ITypeConverter<Output> {
    @Override
    public Output convert(String value) {
      return switch (value.strip().toLowerCase(Locale.ROOT)) {
        case "table" -> Output.TABLE;
        case "json" -> Output.JSON;
        case "csv" -> Output.CSV;
        default ->
            throw new TypeConversionException(
                "unknown format '" + value + "'; use table, json or csv");
      };
    }
  }

  boolean isJson() {
    return output == Output.JSON;
  }

  boolean isCsv() {
    return output == Output.CSV;
  }

  /** These options, with the ones left unset taken from {@code parent}'s (a parent command's). */
  ClientOptions orElse(ClientOptions parent) {
    var merged = new ClientOptions();
    merged.server = server != null ? server : parent.server;
    merged.token = token != null ? token : parent.token;
    merged.output = output != null ? output : parent.output;
    merged.ca = ca != null ? ca : parent.ca;
    merged.insecure = insecure != null ? insecure : parent.insecure;
    return merged;
  }

  /** The controller URLs to try, in order: --server, else $KAIROS_SERVER, else the default. */
  List<URI> servers() {
    String text = server;
    String source = "--server";
    if (text == null) {
      text = Environment.variable("KAIROS_SERVER");
      source = "KAIROS_SERVER";
    }
    if (text == null) {
      text = DEFAULT_SERVER;
    }
    var out = new ArrayList<URI>();
    for (String part : text.split(",")) {
      String s = part.strip();
      if (s.isEmpty()) {
        continue;
      }
      out.add(parseServer(s, source));
    }
    if (out.isEmpty()) {
      throw new UsageException(source + ": no URL given; use e.g. " + DEFAULT_SERVER);
    }
    return out;
  }

  private static URI parseServer(String text, String source) {
    String s = text.contains("://") ? text : "http://" + text;
    while (s.endsWith("/")) {
      s = s.substring(0, s.length() - 1);
    }
    try {
      var uri = new URI(s);
      if (!("http".equals(uri.getScheme()) || "https".equals(uri.getScheme()))
          || uri.getHost() == null
          || uri.getQuery() != null
          || uri.getFragment() != null) {
        throw new URISyntaxException(s, "not an http(s) base URL");
      }
      return uri;
    } catch (URISyntaxException e) {
      throw new UsageException(
          source + ": '" + text + "' is not a controller URL; use e.g. " + DEFAULT_SERVER);
    }
  }

  /** The token: --token, else $KAIROS_TOKEN, else $KAIROS_DATA/admin.token; null when none. */
  String token() {
    if (token != null && !token.isBlank()) {
      return token.strip();
    }
    String fromEnv = Environment.variable("KAIROS_TOKEN");
    if (fromEnv != null) {
      return fromEnv;
    }
    Path file = dataDirectory().resolve("admin.token");
    try {
      if (Files.isRegularFile(file)) {
        String text = Files.readString(file).strip();
        return text.isEmpty() ? null : text;
      }
    } catch (IOException e) {
      // Unreadable: go without a token; the controller's 401 says what to do.
    }
    return null;
  }

  /** The local controller's data directory: $KAIROS_DATA, else ~/.kairos. */
  static Path dataDirectory() {
    String dir = Environment.variable("KAIROS_DATA");
    if (dir == null) {
      return Environment.home.resolve(".kairos");
    }
    if (dir.equals("~") || dir.startsWith("~/")) {
      return Environment.home.resolve(dir.substring(1).replaceFirst("^/", ""));
    }
    return Path.of(dir);
  }

  /** How HTTPS is verified and where plain HTTP is refused ({@link ClientTls}). */
  ClientTls tls() {
    return ClientTls.resolve(ca, Boolean.TRUE.equals(insecure));
  }

  ApiClient connect() {
    return new ApiClient(servers(), token(), tls());
  }
}
