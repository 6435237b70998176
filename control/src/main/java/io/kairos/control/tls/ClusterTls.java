package io.kairos.control.tls;

import java.io.IOException;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509ExtendedKeyManager;
import javax.net.ssl.X509ExtendedTrustManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One replica's TLS identity: the cluster CA in its data directory and the replica's own
 * certificate, issued by that CA at start.
 *
 * <p>Layout of the data directory:
 *
 * <ul>
 *   <li>{@code ca.pem}, {@code ca.key} (0600): the cluster CA. Created on the first start of a
 *       single replica; a group's replicas share one, copied in with {@code --ca-from DIR}.
 *   <li>{@code tls/replica.pem}, {@code tls/replica.key} (0600): this replica's certificate (its
 *       host names and addresses, role {@code replica}, serverAuth and clientAuth) and key, used
 *       for HTTPS and for mutual TLS on the Raft transport.
 * </ul>
 *
 * <p>The replica certificate is issued again at start when it is missing, was signed by another CA,
 * does not name every host it must, expires within {@link #RENEW_BEFORE}, or {@code --rotate-certs}
 * asks; and while running, once a day, when it nears expiry. A re-issued certificate is presented
 * from the next handshake on ({@link RotatingKeyManager}).
 */
public final class ClusterTls implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ClusterTls.class);

  public static final String DIR = "tls";
  public static final String CERT_FILE = "replica.pem";
  public static final String KEY_FILE = "replica.key";
  static final Duration REPLICA_VALIDITY = Duration.ofDays(365);
  static final Duration RENEW_BEFORE = Duration.ofDays(30);
  static final Duration RENEW_CHECK = Duration.ofHours(12);

  private final Path dataDir;
  private final CertificateAuthority ca;
  private final CertificateAuthority.Request request;
  private final InstantSource clock;
  private final RotatingKeyManager keys;
  private final RoleTrustManager replicaTrust;
  private final SSLContext httpsContext;
  private ScheduledExecutorService renewal;

  private ClusterTls(
      Path dataDir,
      CertificateAuthority ca,
      CertificateAuthority.Request request,
      InstantSource clock,
      CertificateAuthority.Issued replica) {
    this.dataDir = dataDir;
    this.ca = ca;
    this.request = request;
    this.clock = clock;
    this.keys = new RotatingKeyManager(replica.key(), chain(replica.certificate()));
    this.replicaTrust = new RoleTrustManager(ca.trusted(), Role.REPLICA);
    try {
      httpsContext = SSLContext.getInstance("TLS");
      httpsContext.init(
          new KeyManager[] {keys}, new TrustManager[] {RoleTrustManager.pkix(ca.trusted())}, null);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("cannot build the HTTPS context", e);
    }
  }

  /**
   * Opens this replica's TLS identity in {@code dataDir}, making what is missing.
   *
   * @param name this replica's name (its Raft peer id), the certificate's common name
   * @param hosts the names and addresses its certificate must carry
   * @param caFrom a directory holding the group's CA ({@code ca.pem}, {@code ca.key}) to copy in
   * @param group whether this replica is one of a group: a group never makes a CA of its own, since
   *     its replicas must share one
   * @param rotate issue a new replica certificate even if the current one is fine
   */
  public static ClusterTls open(
      Path dataDir,
      String name,
      List<String> hosts,
      Optional<Path> caFrom,
      boolean group,
      boolean rotate,
      InstantSource clock)
      throws IOException {
    CertificateAuthority ca = ensureCa(dataDir, caFrom, group, clock.instant());
    // Inside the data directory every file is private (0600, directories 0700), certificates
    // included: the CA certificate is served to whoever asks at /api/v1/ca.pem, not from here.
    Files.setPosixFilePermissions(
        dataDir.resolve(CertificateAuthority.CERT_FILE),
        java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
    var request = new CertificateAuthority.Request(name, Role.REPLICA, hosts, REPLICA_VALIDITY);
    Path dir = dataDir.resolve(DIR);
    Files.createDirectories(dir);
    Files.setPosixFilePermissions(
        dir, java.nio.file.attribute.PosixFilePermissions.fromString("rwx------"));
    Optional<CertificateAuthority.Issued> current = readReplica(dir);
    Optional<String> reason =
        rotate
            ? Optional.of("--rotate-certs")
            : current
                .map(c -> staleness(c.certificate(), ca, hosts, clock.instant()))
                .orElse(Optional.of("none yet"));
    CertificateAuthority.Issued replica;
    if (reason.isPresent()) {
      replica = issueAndStore(ca, request, dir, clock.instant());
      LOG.info(
          "issued this replica's certificate (serial {}, until {}): {}",
          replica.certificate().getSerialNumber().toString(16),
          replica.certificate().getNotAfter().toInstant(),
          reason.get());
    } else {
      replica = current.orElseThrow();
    }
    return new ClusterTls(dataDir, ca, request, clock, replica);
  }

  private static CertificateAuthority ensureCa(
      Path dataDir, Optional<Path> caFrom, boolean group, Instant now) throws IOException {
    Files.createDirectories(dataDir);
    boolean certHere = Files.exists(dataDir.resolve(CertificateAuthority.CERT_FILE));
    boolean keyHere = Files.exists(dataDir.resolve(CertificateAuthority.KEY_FILE));
    if (certHere != keyHere) {
      throw new IOException(
          dataDir
              + " holds only one of "
              + CertificateAuthority.CERT_FILE
              + " and "
              + CertificateAuthority.KEY_FILE
              + ": restore the other (from another replica's data directory)");
    }
    if (caFrom.isPresent()) {
      Path from = caFrom.get();
      if (!CertificateAuthority.existsIn(from)) {
        throw new IllegalArgumentException(
            "--ca-from "
                + from
                + " holds no CA (ca.pem and ca.key); make one with `kairos tls create-ca"
                + " --out "
                + from
                + "`");
      }
      CertificateAuthority given = CertificateAuthority.load(from);
      if (certHere) {
        CertificateAuthority mine = CertificateAuthority.load(dataDir);
        if (!mine.hash().equals(given.hash())) {
          throw new IllegalArgumentException(
              dataDir
                  + " already holds another CA ("
                  + mine.hash()
                  + ") than --ca-from "
                  + from
                  + " ("
                  + given.hash()
                  + "); a replica keeps its cluster's CA. Leave out --ca-from, or start from an"
                  + " empty data directory");
        }
        return mine;
      }
      Pem.writeSecret(
          dataDir.resolve(CertificateAuthority.KEY_FILE),
          Files.readString(from.resolve(CertificateAuthority.KEY_FILE)));
      Pem.writeSecret(
          dataDir.resolve(CertificateAuthority.CERT_FILE),
          Files.readString(from.resolve(CertificateAuthority.CERT_FILE)));
      return CertificateAuthority.load(dataDir);
    }
    if (certHere) {
      return CertificateAuthority.load(dataDir);
    }
    if (group) {
      throw new IllegalArgumentException(
          "the replicas of a group share one cluster CA, and "
              + dataDir
              + " holds none: make it once with `kairos tls create-ca --out DIR`, copy DIR to"
              + " every replica and start each with --ca-from DIR (or run the group in plain"
              + " text with --insecure)");
    }
    CertificateAuthority made = CertificateAuthority.create(dataDir, now);
    LOG.info("created the cluster CA in {} ({})", dataDir, made.hash());
    return made;
  }

  private static Optional<CertificateAuthority.Issued> readReplica(Path dir) throws IOException {
    Path cert = dir.resolve(CERT_FILE);
    Path key = dir.resolve(KEY_FILE);
    if (!Files.exists(cert) || !Files.exists(key)) {
      return Optional.empty();
    }
    X509Certificate certificate = Pem.readCertificates(cert).getFirst();
    PrivateKey privateKey = Pem.readPrivateKey(key);
    if (!Pem.matches(privateKey, certificate)) {
      return Optional.empty(); // a torn pair: issue a new one
    }
    return Optional.of(new CertificateAuthority.Issued(certificate, privateKey));
  }

  /** Why {@code cert} must be issued again, or empty when it is good. */
  static Optional<String> staleness(
      X509Certificate cert, CertificateAuthority ca, List<String> hosts, Instant now) {
    try {
      cert.verify(ca.certificate().getPublicKey());
    } catch (GeneralSecurityException e) {
      return Optional.of("signed by another CA");
    }
    if (!Role.REPLICA.isIn(cert)) {
      return Optional.of("not a replica certificate");
    }
    if (cert.getNotAfter().toInstant().isBefore(now.plus(RENEW_BEFORE))) {
      return Optional.of("expires " + cert.getNotAfter().toInstant());
    }
    Set<String> named = names(cert);
    for (String host : hosts) {
      if (!named.contains(normalize(host))) {
        return Optional.of("does not name " + host);
      }
    }
    return Optional.empty();
  }

  private static Set<String> names(X509Certificate cert) {
    var out = new LinkedHashSet<String>();
    try {
      var sans = cert.getSubjectAlternativeNames();
      if (sans != null) {
        for (List<?> san : sans) {
          if (san.get(0) instanceof Integer type && (type == 2 || type == 7)) {
            out.add(normalize(san.get(1).toString()));
          }
        }
      }
    } catch (CertificateParsingException e) {
      // no readable names: the certificate names nothing
    }
    return out;
  }

  private static String normalize(String host) {
    String h = host.startsWith("[") ? host.substring(1, host.length() - 1) : host;
    if (CertificateAuthority.isIpLiteral(h)) {
      try {
        return InetAddress.getByName(h).getHostAddress();
      } catch (UnknownHostException e) {
        return h;
      }
    }
    return h.toLowerCase(Locale.ROOT);
  }

  private static CertificateAuthority.Issued issueAndStore(
      CertificateAuthority ca, CertificateAuthority.Request request, Path dir, Instant now)
      throws IOException {
    CertificateAuthority.Issued issued = ca.issue(request, now);
    Pem.writeSecret(dir.resolve(KEY_FILE), Pem.encode(issued.key()));
    Pem.writeSecret(dir.resolve(CERT_FILE), Pem.encode(chain(issued.certificate(), ca)));
    return issued;
  }

  private List<X509Certificate> chain(X509Certificate leaf) {
    return chain(leaf, ca);
  }

  private static List<X509Certificate> chain(X509Certificate leaf, CertificateAuthority ca) {
    return List.of(leaf, ca.certificate());
  }

  /**
   * The names and addresses a replica's certificate carries: the host it listens on (or, on a
   * wildcard address, this machine's name and addresses), loopback, and any {@code --tls-san}.
   */
  public static List<String> hostsFor(String listenHost, List<String> extra) {
    var hosts = new LinkedHashSet<String>();
    boolean wildcard =
        listenHost.equals("0.0.0.0") || listenHost.equals("::") || listenHost.equals("[::]");
    if (!wildcard) {
      hosts.add(listenHost);
    } else {
      try {
        hosts.add(InetAddress.getLocalHost().getHostName());
      } catch (UnknownHostException e) {
        // no name for this machine: its addresses below still go in
      }
      hosts.addAll(interfaceAddresses());
    }
    hosts.addAll(extra);
    hosts.add("localhost");
    hosts.add("127.0.0.1");
    hosts.add("::1");
    return List.copyOf(hosts);
  }

  private static List<String> interfaceAddresses() {
    var out = new ArrayList<String>();
    try {
      for (NetworkInterface ni : Collections.list(NetworkInterface.getNetworkInterfaces())) {
        for (InetAddress a : Collections.list(ni.getInetAddresses())) {
          if (!a.isLoopbackAddress() && !a.isLinkLocalAddress()) {
            String text = a.getHostAddress();
            int zone = text.indexOf('%');
            out.add(zone < 0 ? text : text.substring(0, zone));
          }
        }
      }
    } catch (SocketException e) {
      // no interfaces to list: the machine's name and loopback remain
    }
    Collections.sort(out);
    return out;
  }

  /** Re-issues the replica certificate if it nears expiry; true when it did. */
  public synchronized boolean renewIfDue() throws IOException {
    Instant now = clock.instant();
    X509Certificate cert = keys.certificate();
    if (!cert.getNotAfter().toInstant().isBefore(now.plus(RENEW_BEFORE))) {
      return false;
    }
    rotate(now, "expires " + cert.getNotAfter().toInstant());
    return true;
  }

  /** Issues a new replica certificate now and presents it from the next handshake on. */
  public synchronized void rotate() throws IOException {
    rotate(clock.instant(), "asked");
  }

  private void rotate(Instant now, String why) throws IOException {
    CertificateAuthority.Issued next = issueAndStore(ca, request, dataDir.resolve(DIR), now);
    keys.replace(next.key(), chain(next.certificate()));
    LOG.info(
        "re-issued this replica's certificate (serial {}, until {}): {}",
        next.certificate().getSerialNumber().toString(16),
        next.certificate().getNotAfter().toInstant(),
        why);
  }

  /** Checks twice a day whether the replica certificate nears expiry, and re-issues it then. */
  public synchronized void startRenewal() {
    if (renewal != null) {
      return;
    }
    renewal =
        Executors.newSingleThreadScheduledExecutor(
            Thread.ofPlatform().name("kairos-cert-renewal").daemon().factory());
    renewal.scheduleWithFixedDelay(
        () -> {
          try {
            renewIfDue();
          } catch (IOException | RuntimeException e) {
            LOG.error("could not re-issue this replica's certificate; will try again", e);
          }
        },
        RENEW_CHECK.toMinutes(),
        RENEW_CHECK.toMinutes(),
        TimeUnit.MINUTES);
  }

  public CertificateAuthority ca() {
    return ca;
  }

  /** The CA certificates agents and clients fetch ({@code GET /api/v1/ca.pem}). */
  public String caPem() {
    return Pem.encode(ca.trusted());
  }

  /** The certificate presented now. */
  public X509Certificate certificate() {
    return keys.certificate();
  }

  /** This replica's key and certificate, as both a TLS server and a TLS client presents them. */
  public X509ExtendedKeyManager keyManager() {
    return keys;
  }

  /** Trusts peers that present a replica certificate of this cluster's CA (Raft, both ways). */
  public X509ExtendedTrustManager replicaTrust() {
    return replicaTrust;
  }

  /** The HTTPS server's context: the replica certificate; client certificates of the CA. */
  public SSLContext httpsContext() {
    return httpsContext;
  }

  @Override
  public synchronized void close() {
    if (renewal != null) {
      renewal.shutdownNow();
    }
  }
}
