package io.kairos.cli;

import io.kairos.agent.ControllerTrust;
import io.kairos.protocol.agent.NodeCredential;
import io.kairos.protocol.agent.Registered;
import io.kairos.protocol.agent.Registration;
import java.io.IOException;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.util.Base64;
import java.util.HexFormat;
import java.util.Optional;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedKeyManager;

/**
 * The simulated agents' own credentials, as real agents have them: over {@code http://}, a node
 * secret each (sent as its heartbeats' bearer token); over {@code https://}, an EC P-256 key each,
 * for which the controller issues a certificate at registration, presented as the TLS client
 * certificate of that agent's own connection. So a heartbeat costs the controller what a real
 * agent's does: a bearer lookup, or a TLS connection per agent and a client certificate check.
 */
final class BenchNodes {
  private static final SecureRandom RANDOM = new SecureRandom();

  private final String prefix;
  private final boolean certificates;
  private final String[] secrets;
  private final KeyPair[] keys;
  private final X509Certificate[][] chains;

  BenchNodes(String prefix, int agents, boolean certificates) {
    this.prefix = prefix;
    this.certificates = certificates;
    this.secrets = new String[agents];
    this.keys = new KeyPair[agents];
    this.chains = new X509Certificate[agents][];
  }

  boolean certificates() {
    return certificates;
  }

  String name(int i) {
    return prefix + i;
  }

  /** {@code base} with agent {@code i}'s credential, made now, and a log server of its kind. */
  Registration withCredential(int i, Registration base) {
    if (!certificates) {
      byte[] bytes = new byte[32];
      RANDOM.nextBytes(bytes);
      secrets[i] = NodeCredential.SECRET_PREFIX + HexFormat.of().formatHex(bytes);
      return base.withLogToken("klog_" + secrets[i].substring(6))
          .withCredential(NodeCredential.ofSecret(secrets[i]));
    }
    try {
      var generator = KeyPairGenerator.getInstance("EC");
      generator.initialize(new ECGenParameterSpec("secp256r1"), RANDOM);
      keys[i] = generator.generateKeyPair();
      var signer = Signature.getInstance("SHA256withECDSA");
      signer.initSign(keys[i].getPrivate());
      signer.update(NodeCredential.proofText(name(i)).getBytes(StandardCharsets.UTF_8));
      var b64 = Base64.getEncoder();
      return new Registration(
              base.node(),
              "https://127.0.0.1:1",
              base.gpus(),
              base.cpus(),
              base.memoryBytes(),
              base.labels(),
              base.zone(),
              base.block(),
              base.rack(),
              base.nvlinkDomainSize(),
              null,
              null)
          .withCredential(
              NodeCredential.ofKey(
                  b64.encodeToString(keys[i].getPublic().getEncoded()),
                  b64.encodeToString(signer.sign())));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("ECDSA P-256 is missing from this JDK", e);
    }
  }

  /** Keeps what the registration of agent {@code i} answered (its certificate). */
  void registered(int i, Registered reply) throws IOException {
    if (certificates) {
      if (reply.certificate() == null) {
        throw new IOException(name(i) + ": the controller issued no certificate");
      }
      chains[i] =
          ControllerTrust.certificates(reply.certificate(), name(i) + "'s certificate")
              .toArray(X509Certificate[]::new);
    }
  }

  /** The bearer token of agent {@code i}'s heartbeats: its node secret; null with a certificate. */
  String bearer(int i) {
    return certificates ? null : secrets[i];
  }

  /**
   * A connection of agent {@code i}, presenting its certificate. Each agent has a TLS context of
   * its own, as a real agent (a process of its own) has: a shared one would resume another agent's
   * TLS session, and with it that agent's identity.
   */
  RawHttp connect(URI server, int i, ClientTls tls) throws IOException {
    return new RawHttp(server, Optional.of(tls.contextWith(new Keys(i))));
  }

  /** Presents the certificate of agent {@code i}. */
  private final class Keys extends X509ExtendedKeyManager {
    private final int i;

    Keys(int i) {
      this.i = i;
    }

    private String alias() {
      return chains[i] == null ? null : Integer.toString(i);
    }

    @Override
    public String[] getClientAliases(String keyType, Principal[] issuers) {
      String a = alias();
      return a == null ? null : new String[] {a};
    }

    @Override
    public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
      return alias();
    }

    @Override
    public String chooseEngineClientAlias(String[] keyType, Principal[] issuers, SSLEngine e) {
      return alias();
    }

    @Override
    public String[] getServerAliases(String keyType, Principal[] issuers) {
      return null;
    }

    @Override
    public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
      return null;
    }

    @Override
    public X509Certificate[] getCertificateChain(String alias) {
      return chains[Integer.parseInt(alias)].clone();
    }

    @Override
    public PrivateKey getPrivateKey(String alias) {
      return keys[Integer.parseInt(alias)].getPrivate();
    }
  }
}
