package io.kairos.agent;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Pattern;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509TrustManager;

/**
 * Whom the agent takes for its controller, and over what.
 *
 * <ul>
 *   <li><b>Pinned CA.</b> {@code kairos agent --ca-hash sha256:...} fetches the cluster CA from
 *       {@code GET /api/v1/ca.pem} on first contact (no token sent), keeps it only if its public
 *       key hashes to the pin, and stores it as {@code DATA/ca.pem}; from then on every call
 *       verifies the controller's certificate (chain and host name) against that CA alone, and a
 *       plain {@code http://} URL is refused, so the join token never goes to a server that has not
 *       proved it is the controller. {@code --ca FILE} trusts a CA file directly.
 *   <li><b>No CA.</b> {@code https://} is verified against the JDK's trusted CAs (a site's own
 *       certificate); {@code http://} is allowed on loopback only, unless {@code --insecure}.
 * </ul>
 *
 * <p>JDK only: the agent does not depend on the controller's certificate code.
 */
public final class ControllerTrust {
  /** Where a pinned CA is kept, in the agent's data directory. */
  public static final String PINNED_FILE = "ca.pem";

  public static final String CA_PATH = "/api/v1/ca.pem";
  private static final Pattern HASH = Pattern.compile("sha256:[0-9a-fA-F]{64}");

  private final Optional<SSLContext> context;
  private final Optional<Path> caFile;
  private final boolean insecure;

  private ControllerTrust(Optional<SSLContext> context, Optional<Path> caFile, boolean insecure) {
    this.context = context;
    this.caFile = caFile;
    this.insecure = insecure;
  }

  /** For tests of the client's other behaviour: the JDK's CAs, plain text allowed anywhere. */
  static ControllerTrust unchecked() {
    return new ControllerTrust(Optional.empty(), Optional.empty(), true);
  }

  /**
   * The trust an agent with {@code config} places in its controllers: its CA file if it has one,
   * and whether plain text may leave the machine. Refuses a configuration that would send the join
   * token in clear.
   *
   * @throws IllegalArgumentException naming the controller URL that may not be used
   */
  public static ControllerTrust of(AgentConfig config) {
    Optional<Path> file = Optional.ofNullable(config.caFile());
    Optional<SSLContext> context = Optional.empty();
    if (file.isPresent()) {
      try {
        context = Optional.of(trusting(readCertificates(file.get())));
      } catch (IOException e) {
        throw new IllegalArgumentException(
            "the controller CA " + file.get() + ": " + e.getMessage());
      }
    }
    var trust = new ControllerTrust(context, file, config.insecure());
    for (String url : config.controllers()) {
      trust
          .refusal(url)
          .ifPresent(
              reason -> {
                throw new IllegalArgumentException(reason);
              });
    }
    return trust;
  }

  /** The TLS context verifying controllers against the CA, or empty for the JDK's CAs. */
  public Optional<SSLContext> context() {
    return context;
  }

  /** Why the agent must not send its join token to {@code url}; empty when it may. */
  public Optional<String> refusal(String url) {
    URI uri = URI.create(url);
    if (!"http".equals(uri.getScheme())) {
      return Optional.empty();
    }
    if (caFile.isPresent()) {
      return Optional.of(
          url
              + " is plain HTTP, but this agent verifies its controller against the CA in "
              + caFile.get()
              + ": refusing to send it the join token; use https://"
              + uri.getRawAuthority());
    }
    if (!insecure && !isLoopback(uri.getHost())) {
      return Optional.of(
          url
              + " is plain HTTP over the network: the join token would travel in clear. Use"
              + " https:// with --ca-hash (kairos server prints it), or --insecure to accept that");
    }
    return Optional.empty();
  }

  /** A one-line account of a failed exchange, naming a TLS failure as such. */
  public String describe(String url, IOException error) {
    for (Throwable t = error; t != null; t = t.getCause()) {
      if (t instanceof SSLException) {
        return "TLS with "
            + url
            + " failed, nothing was sent: its certificate is not signed by "
            + caFile.map(f -> "the CA in " + f).orElse("a CA this JVM trusts")
            + ", or does not name "
            + URI.create(url).getHost()
            + " ("
            + t.getMessage()
            + ")";
      }
    }
    return error.toString();
  }

  /** Whether {@code host} is this machine's loopback: "localhost" or a loopback IP literal. */
  public static boolean isLoopback(String host) {
    if (host == null) {
      return false;
    }
    String h =
        host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
    if (h.equalsIgnoreCase("localhost")) {
      return true;
    }
    if (!h.contains(":") && !h.matches("\\d{1,3}(\\.\\d{1,3}){3}")) {
      return false; // a name: not resolved here, so not taken for loopback
    }
    try {
      return InetAddress.getByName(h).isLoopbackAddress();
    } catch (UnknownHostException e) {
      return false;
    }
  }

  /** {@code sha256:} and the hex SHA-256 of the certificate's SubjectPublicKeyInfo. */
  public static String spkiSha256(X509Certificate certificate) {
    try {
      return "sha256:"
          + HexFormat.of()
              .formatHex(
                  MessageDigest.getInstance("SHA-256")
                      .digest(certificate.getPublicKey().getEncoded()));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this JDK", e);
    }
  }

  /** Checks the form of a pin ({@code sha256:} and 64 hex digits) and returns it in lower case. */
  public static String parseHash(String text) {
    String s = text == null ? "" : text.strip();
    if (!HASH.matcher(s).matches()) {
      throw new IllegalArgumentException(
          "--ca-hash '"
              + text
              + "' must be sha256: and 64 hex digits, as `kairos server` prints it (or `kairos tls"
              + " ca-hash` on the controller)");
    }
    return s.toLowerCase(Locale.ROOT);
  }

  /** The certificates of a PEM file. */
  public static List<X509Certificate> readCertificates(Path file) throws IOException {
    return certificates(Files.readString(file, StandardCharsets.US_ASCII), file.toString());
  }

  /** The certificates of a PEM text. */
  public static List<X509Certificate> certificates(String pem, String source) throws IOException {
    var out = new ArrayList<X509Certificate>();
    String begin = "-----BEGIN CERTIFICATE-----";
    String end = "-----END CERTIFICATE-----";
    for (int b = pem.indexOf(begin); b >= 0; b = pem.indexOf(begin, b + 1)) {
      int e = pem.indexOf(end, b);
      if (e < 0) {
        throw new IOException(source + ": a CERTIFICATE block has no END line");
      }
      try {
        byte[] der = Base64.getMimeDecoder().decode(pem.substring(b + begin.length(), e));
        out.add(
            (X509Certificate)
                CertificateFactory.getInstance("X.509")
                    .generateCertificate(new ByteArrayInputStream(der)));
      } catch (CertificateException | IllegalArgumentException ex) {
        throw new IOException(source + ": a certificate does not parse: " + ex.getMessage());
      }
    }
    if (out.isEmpty()) {
      throw new IOException(source + " holds no PEM certificate");
    }
    return out;
  }

  /** A TLS context that trusts exactly {@code cas} (host names are still checked by clients). */
  public static SSLContext trusting(List<X509Certificate> cas) {
    try {
      var context = SSLContext.getInstance("TLS");
      context.init(null, new TrustManager[] {pkix(cas)}, null);
      return context;
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("cannot build a TLS context for the controller CA", e);
    }
  }

  private static X509TrustManager pkix(List<X509Certificate> cas) throws GeneralSecurityException {
    var store = KeyStore.getInstance("PKCS12");
    try {
      store.load(null, null);
    } catch (IOException e) {
      throw new IllegalStateException("an empty key store failed to load", e);
    }
    for (int i = 0; i < cas.size(); i++) {
      store.setCertificateEntry("ca-" + i, cas.get(i));
    }
    var factory = TrustManagerFactory.getInstance("PKIX");
    factory.init(store);
    for (TrustManager tm : factory.getTrustManagers()) {
      if (tm instanceof X509TrustManager x509) {
        return x509;
      }
    }
    throw new IllegalStateException("no X.509 trust manager");
  }

  /** The first contact found a CA that does not match the pin: never retried. */
  public static final class PinMismatchException extends IOException {
    private static final long serialVersionUID = 1L;

    PinMismatchException(String message) {
      super(message);
    }
  }

  /**
   * The CA file to trust, from what is pinned already in {@code dataDir} and an optional pin.
   *
   * @return the stored pinned CA, if there is one (and it matches {@code hash} when given)
   * @throws PinMismatchException when the stored CA does not match {@code hash}
   */
  public static Optional<Path> stored(Path dataDir, Optional<String> hash) throws IOException {
    Path file = dataDir.resolve(PINNED_FILE);
    if (!Files.exists(file)) {
      return Optional.empty();
    }
    if (hash.isPresent()) {
      boolean matches =
          readCertificates(file).stream().anyMatch(c -> spkiSha256(c).equals(hash.get()));
      if (!matches) {
        throw new PinMismatchException(
            file
                + " pins another CA than --ca-hash "
                + hash.get()
                + "; if the cluster's CA really changed, remove that file to pin the new one");
      }
    }
    return Optional.of(file);
  }

  /**
   * First contact: fetches {@code /api/v1/ca.pem} from the first controller that answers, without
   * any token, keeps the CA certificate whose public key hashes to {@code hash}, checks that the
   * server's own certificate chains to it, and stores it as {@code DATA/ca.pem}.
   *
   * @throws PinMismatchException when a controller answers with no CA of that hash, or presents a
   *     certificate that CA did not sign: not the cluster, or a wrong pin
   * @throws IOException when no controller answered
   */
  public static Path pin(List<String> controllers, String hash, Path dataDir)
      throws IOException, InterruptedException {
    var failures = new ArrayList<String>();
    for (String base : controllers) {
      if (!base.startsWith("https://")) {
        throw new PinMismatchException(
            base + " is plain HTTP: a pinned CA is checked over https:// only");
      }
      var seen = new CapturingTrustManager();
      HttpResponse<String> response;
      try (var http =
          HttpClient.newBuilder()
              .connectTimeout(Duration.ofSeconds(5))
              .sslContext(capturing(seen))
              .build()) {
        response =
            http.send(
                HttpRequest.newBuilder(URI.create(base + CA_PATH))
                    .timeout(Duration.ofSeconds(10))
                    .GET()
                    .build(),
                HttpResponse.BodyHandlers.ofString());
      } catch (IOException e) {
        failures.add(base + ": " + e.getMessage());
        continue;
      }
      if (response.statusCode() != 200) {
        failures.add(base + CA_PATH + " answered " + response.statusCode());
        continue;
      }
      X509Certificate ca =
          certificates(response.body(), base + CA_PATH).stream()
              .filter(c -> spkiSha256(c).equals(hash))
              .findFirst()
              .orElseThrow(
                  () ->
                      new PinMismatchException(
                          base
                              + " serves no CA with the hash "
                              + hash
                              + ": a wrong --ca-hash, or not your cluster's controller; no token"
                              + " was sent"));
      try {
        pkix(List.of(ca)).checkServerTrusted(seen.chain(), "UNKNOWN");
      } catch (GeneralSecurityException e) {
        throw new PinMismatchException(
            base
                + " serves the pinned CA but presents a certificate it did not sign ("
                + e.getMessage()
                + "): a man in the middle? no token was sent");
      }
      Files.createDirectories(dataDir);
      Path file = dataDir.resolve(PINNED_FILE);
      Path tmp = dataDir.resolve(PINNED_FILE + ".tmp");
      Files.writeString(
          tmp,
          "-----BEGIN CERTIFICATE-----\n"
              + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                  .encodeToString(encoded(ca))
              + "\n-----END CERTIFICATE-----\n",
          StandardCharsets.US_ASCII,
          StandardOpenOption.CREATE,
          StandardOpenOption.TRUNCATE_EXISTING,
          StandardOpenOption.WRITE);
      Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      return file;
    }
    throw new IOException("no controller answered " + CA_PATH + ": " + String.join("; ", failures));
  }

  private static byte[] encoded(X509Certificate c) {
    try {
      return c.getEncoded();
    } catch (java.security.cert.CertificateEncodingException e) {
      throw new IllegalStateException("cannot encode a certificate that was just decoded", e);
    }
  }

  private static SSLContext capturing(CapturingTrustManager tm) {
    try {
      var context = SSLContext.getInstance("TLS");
      context.init(null, new TrustManager[] {tm}, null);
      return context;
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("cannot build a TLS context", e);
    }
  }

  /**
   * Accepts any server for the one request that fetches the CA (which carries no secret), and
   * remembers the chain it presented so that it can be checked against the CA once the CA is known.
   */
  private static final class CapturingTrustManager extends javax.net.ssl.X509ExtendedTrustManager {
    private volatile X509Certificate[] chain = new X509Certificate[0];

    X509Certificate[] chain() throws SSLPeerUnverifiedException {
      if (chain.length == 0) {
        throw new SSLPeerUnverifiedException("the server presented no certificate");
      }
      return chain.clone();
    }

    @Override
    public void checkServerTrusted(X509Certificate[] presented, String authType) {
      chain = presented.clone();
    }

    @Override
    public void checkServerTrusted(
        X509Certificate[] presented, String authType, java.net.Socket socket) {
      chain = presented.clone();
    }

    @Override
    public void checkServerTrusted(
        X509Certificate[] presented, String authType, javax.net.ssl.SSLEngine engine) {
      chain = presented.clone();
    }

    @Override
    public void checkClientTrusted(X509Certificate[] presented, String authType)
        throws CertificateException {
      throw new CertificateException("not a server");
    }

    @Override
    public void checkClientTrusted(
        X509Certificate[] presented, String authType, java.net.Socket socket)
        throws CertificateException {
      throw new CertificateException("not a server");
    }

    @Override
    public void checkClientTrusted(
        X509Certificate[] presented, String authType, javax.net.ssl.SSLEngine engine)
        throws CertificateException {
      throw new CertificateException("not a server");
    }

    @Override
    public X509Certificate[] getAcceptedIssuers() {
      return new X509Certificate[0];
    }
  }
}
