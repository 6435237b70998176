package io.kairos.cli;

import io.kairos.agent.ControllerTrust;
import io.kairos.control.tls.CertificateAuthority;
import io.kairos.control.tls.Pem;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code kairos tls}: the cluster CA by hand: make one for a replica group ({@code create-ca}),
 * print a CA's pin ({@code ca-hash}), fetch a controller's CA against its pin ({@code fetch-ca}).
 */
@Command(
    name = "tls",
    mixinStandardHelpOptions = true,
    subcommands = {TlsCommand.CreateCa.class, TlsCommand.CaHash.class, TlsCommand.FetchCa.class},
    description = {
      "The cluster CA (docs/operations.md, TLS): create-ca makes one to share between the"
          + " replicas of a group, ca-hash prints the pin agents give as --ca-hash, fetch-ca gets"
          + " a controller's CA for the CLI (--ca, KAIROS_CA) after checking its pin."
    })
final class TlsCommand implements Runnable {
  @Spec CommandSpec spec;

  @Override
  public void run() {
    throw new ParameterException(
        spec.commandLine(), "Missing subcommand: kairos tls create-ca | ca-hash | fetch-ca");
  }

  /** {@code kairos tls create-ca --out DIR}. */
  @Command(
      name = "create-ca",
      mixinStandardHelpOptions = true,
      description = {
        "Creates a cluster CA in DIR: ca.pem and ca.key (mode 0600). Copy DIR to every replica"
            + " of a group and start each with `kairos server --ca-from DIR`; then delete the"
            + " copies of ca.key outside the replicas' data directories."
      })
  static final class CreateCa implements Callable<Integer> {
    @Option(names = "--out", required = true, paramLabel = "DIR", description = "Where to write.")
    Path out;

    @Override
    public Integer call() throws IOException {
      if (CertificateAuthority.existsIn(out)
          || Files.exists(out.resolve(CertificateAuthority.CERT_FILE))) {
        throw new UsageException(out + " already holds a CA; it is never overwritten");
      }
      var ca = CertificateAuthority.create(out, Instant.now());
      System.out.println(ca.hash());
      System.err.println(
          "kairos: created the cluster CA in "
              + out
              + " (ca.pem, ca.key); start each replica with --ca-from "
              + out);
      return 0;
    }
  }

  /** {@code kairos tls ca-hash [--ca FILE | --data DIR]}. */
  @Command(
      name = "ca-hash",
      mixinStandardHelpOptions = true,
      description = {
        "Prints the pin of a CA (sha256: of its public key), as agents take it with --ca-hash."
      })
  static final class CaHash implements Callable<Integer> {
    @Option(names = "--ca", paramLabel = "FILE", description = "A CA certificate (PEM).")
    Path ca;

    @Option(
        names = "--data",
        paramLabel = "DIR",
        description = "A controller's data directory (default: $KAIROS_DATA or ~/.kairos).")
    Path data;

    @Override
    public Integer call() throws IOException {
      Path file = ca != null ? ca : DataDir.resolve(data).resolve(CertificateAuthority.CERT_FILE);
      if (!Files.isRegularFile(file)) {
        throw new UsageException(file + " does not exist: give --ca FILE or --data DIR");
      }
      System.out.println(Pem.spkiSha256(Pem.readCertificates(file).getFirst()));
      return 0;
    }
  }

  /** {@code kairos tls fetch-ca --server URL --ca-hash H --out FILE}. */
  @Command(
      name = "fetch-ca",
      mixinStandardHelpOptions = true,
      description = {
        "Fetches the cluster CA from a controller (GET /api/v1/ca.pem, no token sent), keeps it"
            + " only if its public key has the given hash and the controller's certificate"
            + " chains to it, and writes it to --out, for --ca or KAIROS_CA."
      })
  static final class FetchCa implements Callable<Integer> {
    @Option(
        names = "--server",
        required = true,
        paramLabel = "URL",
        description = "The controller, https://HOST:PORT.")
    String server;

    @Option(
        names = "--ca-hash",
        required = true,
        paramLabel = "sha256:HEX",
        description = "The pin `kairos server` printed.")
    String hash;

    @Option(
        names = "--out",
        paramLabel = "FILE",
        description = "Where to write the CA (default: $KAIROS_DATA/ca.pem, ~/.kairos/ca.pem).")
    Path out;

    @Override
    public Integer call() throws IOException, InterruptedException {
      Path file = out != null ? out : ClientOptions.dataDirectory().resolve("ca.pem");
      if (Files.exists(file)) {
        throw new UsageException(file + " exists already; give --out FILE to write elsewhere");
      }
      String pin = ControllerTrust.parseHash(hash);
      Path dir = Files.createTempDirectory("kairos-ca");
      try {
        Path fetched;
        try {
          fetched = ControllerTrust.pin(List.of(server.replaceAll("/+$", "")), pin, dir);
        } catch (ControllerTrust.PinMismatchException e) {
          throw new UsageException(e.getMessage());
        } catch (IOException e) {
          throw new UsageException(e.getMessage());
        }
        Files.createDirectories(file.toAbsolutePath().getParent());
        Files.copy(fetched, file);
        System.err.println("kairos: wrote the cluster CA " + pin + " to " + file);
        return 0;
      } finally {
        try (var files = Files.list(dir)) {
          for (Path p : files.toList()) {
            Files.deleteIfExists(p);
          }
        }
        Files.deleteIfExists(dir);
      }
    }
  }
}
