package io.kairos.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.kairos.protocol.TokenCreated;
import io.kairos.protocol.TokenRequest;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.spec.ECGenParameterSpec;
import java.util.Base64;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code kairos token create}: a new bearer token, printed once; or, with {@code --extender
 * --cert-out DIR}, a client certificate for the kube-scheduler extender, for a key made here.
 */
@Command(
    name = "create",
    mixinStandardHelpOptions = true,
    description = {
      "Create a credential (admins only). A token is printed once on stdout (the controller keeps"
          + " only its hash); a hint on how to use it goes to stderr. Every token expires:"
          + " --ttl, else join 24h, user and admin 90d, extender 365d.",
      "Examples: TOKEN=$(kairos token create --user alice)",
      "          kairos token create --join --ttl 2h > join.token",
      "          kairos token create --extender --cert-out /etc/kubernetes/kairos",
      ""
    })
final class TokenCreateCommand extends ApiCommand {
  @Option(
      names = "--user",
      paramLabel = "NAME",
      description = "Who the token is for (required for user and admin tokens).")
  String user;

  @Option(
      names = "--admin",
      description =
          "The token may also act as an admin (create tokens, drain nodes, submit for others).")
  boolean admin;

  @Option(
      names = "--join",
      description =
          "A join token: it registers new nodes (kairos agent --join-token-file), nothing else.")
  boolean join;

  @Option(
      names = "--extender",
      description = "A kube-scheduler extender credential: the extender's verbs and nothing else.")
  boolean extender;

  @Option(
      names = "--ttl",
      paramLabel = "TIME",
      description =
          "How long it is valid: 30m, 24h, 90d... or never (default: by kind, see above).")
  String ttl;

  @Option(
      names = "--cert-out",
      paramLabel = "DIR",
      description =
          "With --extender: make a key here and get a client certificate of the cluster CA for it"
              + " instead of a token (what kube-scheduler's tlsConfig takes): writes DIR/extender.key"
              + " (0600), DIR/extender.pem and DIR/ca.pem.")
  Path certOut;

  @Override
  int run(ApiClient api, PrintWriter out) {
    if (!join && !extender && user == null) {
      throw new UsageException("give --user NAME (or --join, or --extender)");
    }
    if (certOut != null && !extender) {
      throw new UsageException("--cert-out makes an extender's certificate: add --extender");
    }
    KeyPair key = certOut == null ? null : newKey();
    if (key != null) {
      writeKey(key); // before asking: a certificate is never issued for a key not kept
    }
    String publicKey =
        key == null ? null : Base64.getEncoder().encodeToString(key.getPublic().getEncoded());
    JsonNode reply =
        api.post(
            "/api/v1/tokens",
            new TokenRequest(
                user,
                admin ? Boolean.TRUE : null,
                join ? Boolean.TRUE : null,
                extender ? Boolean.TRUE : null,
                ttl,
                publicKey));
    TokenCreated created = Json.convert(reply, TokenCreated.class);
    PrintWriter err = spec.commandLine().getErr();
    if (key != null) {
      writeCertificate(created);
      if (isJson()) {
        Json.print(out, reply);
      } else {
        out.println(certOut.resolve("extender.pem"));
      }
      err.println(
          "Extender certificate "
              + created.id()
              + (created.expiresAt() == null ? "" : ", valid until " + created.expiresAt())
              + ". In kube-scheduler's extender config: enableHTTPS: true, tlsConfig: {certFile: "
              + certOut.resolve("extender.pem")
              + ", keyFile: "
              + certOut.resolve("extender.key")
              + ", caFile: "
              + certOut.resolve("ca.pem")
              + "}");
      err.flush();
      return 0;
    }
    if (isJson()) {
      Json.print(out, reply);
      return 0;
    }
    out.println(created.token());
    out.flush();
    String expires =
        created.expiresAt() == null ? "never expires" : "expires " + created.expiresAt();
    String hint =
        join
            ? "Join token "
                + created.id()
                + ", "
                + expires
                + ". Join a node with: kairos agent"
                + " --join-token-file FILE (the token in FILE)"
            : extender
                ? "Extender token "
                    + created.id()
                    + ", "
                    + expires
                    + ": send it as"
                    + " 'Authorization: Bearer TOKEN' to /api/v1/k8s-extender/"
                : "Token "
                    + created.id()
                    + " for "
                    + created.user()
                    + (created.admin() ? " (admin)" : "")
                    + ", "
                    + expires
                    + ", shown once. Use it with: export KAIROS_TOKEN="
                    + created.token();
    err.println(hint);
    err.flush();
    return 0;
  }

  private static KeyPair newKey() {
    try {
      var generator = KeyPairGenerator.getInstance("EC");
      generator.initialize(new ECGenParameterSpec("secp256r1"));
      return generator.generateKeyPair();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("ECDSA P-256 is missing from this JDK", e);
    }
  }

  private void writeKey(KeyPair key) {
    try {
      Files.createDirectories(certOut);
      Path keyFile = certOut.resolve("extender.key");
      Files.deleteIfExists(keyFile);
      Files.createFile(
          keyFile,
          PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
      Files.writeString(
          keyFile,
          "-----BEGIN PRIVATE KEY-----\n"
              + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                  .encodeToString(key.getPrivate().getEncoded())
              + "\n-----END PRIVATE KEY-----\n",
          StandardCharsets.US_ASCII,
          StandardOpenOption.WRITE);
    } catch (IOException e) {
      throw new UsageException("cannot write the extender's key in " + certOut + ": " + e);
    }
  }

  private void writeCertificate(TokenCreated created) {
    try {
      Files.writeString(certOut.resolve("extender.pem"), created.certificate());
      Files.writeString(certOut.resolve("ca.pem"), created.ca());
    } catch (IOException e) {
      throw new UsageException("cannot write the extender's files in " + certOut + ": " + e);
    }
  }
}
