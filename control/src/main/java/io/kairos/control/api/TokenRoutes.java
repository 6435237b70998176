package io.kairos.control.api;

import io.javalin.config.JavalinConfig;
import io.kairos.control.auth.Tokens;
import io.kairos.control.state.ControlCommand.AddToken;
import io.kairos.control.state.ControlCommand.RevokeToken;
import io.kairos.control.state.TokenRecord;
import io.kairos.control.tls.ClusterTls;
import io.kairos.control.tls.Role;
import io.kairos.protocol.TokenCreated;
import io.kairos.protocol.TokenRequest;
import io.kairos.protocol.TokenView;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PublicKey;
import java.security.cert.X509Certificate;
import java.security.spec.X509EncodedKeySpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * {@code /api/v1/tokens}, admins only: make a credential (a user, admin, join or extender token, or
 * an extender's client certificate), list them with their last use, revoke one.
 *
 * <p>Every token expires: {@code ttl} in the request, else the kind's default ({@link
 * #defaultTtl}); {@code never} is allowed and shown. The bootstrap tokens of a data directory
 * ({@code admin.token}, {@code join.token}) never expire; they can be revoked like any other.
 */
final class TokenRoutes {
  private static final Pattern USER = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._@-]{0,63}");
  private static final Pattern ID = Pattern.compile("[0-9a-f]{" + TokenRecord.ID_LENGTH + ",64}");

  static final Duration JOIN_TTL = Duration.ofHours(24);
  static final Duration USER_TTL = Duration.ofDays(90);
  static final Duration EXTENDER_TTL = Duration.ofDays(365);

  private TokenRoutes() {}

  static void register(JavalinConfig config, Services s) {
    config.routes.post(
        "/api/v1/tokens",
        ctx -> {
          Api.admin(ctx);
          TokenRequest req = Json.read(ctx.bodyAsBytes(), TokenRequest.class);
          ctx.status(201).json(create(s, req));
        });
    config.routes.get(
        "/api/v1/tokens",
        ctx -> {
          Api.admin(ctx);
          long now = s.clock().millis();
          ctx.json(
              s.read(
                  st ->
                      st.tokens().stream()
                          .sorted(
                              Comparator.comparingLong(TokenRecord::createdMs)
                                  .thenComparing(TokenRecord::sha256))
                          .map(t -> view(s, t, now))
                          .toList()));
        });
    config.routes.delete(
        "/api/v1/tokens/{id}",
        ctx -> {
          Api.admin(ctx);
          String id = ctx.pathParam("id").toLowerCase(java.util.Locale.ROOT);
          if (!ID.matcher(id).matches()) {
            throw ApiError.invalid(
                "id",
                "'" + Submissions.clip(id) + "' is not a token id",
                "use an ID that `kairos token list` shows");
          }
          List<TokenRecord> matching =
              s.read(st -> st.tokens().stream().filter(t -> t.sha256().startsWith(id)).toList());
          if (matching.isEmpty()) {
            throw ApiError.notFound("no token " + id + "; `kairos token list` shows them");
          }
          if (matching.size() > 1) {
            throw ApiError.conflict("more than one token starts with " + id + ": give more of it");
          }
          TokenRecord target = matching.getFirst();
          String hash = target.sha256();
          refuseLastAdmin(s, target);
          Services.check(s.commit(new RevokeToken(s.clock().millis(), hash)));
          ctx.json(s.read(st -> view(s, st.token(hash).orElseThrow(), s.clock().millis())));
        });
  }

  /**
   * Refuses to revoke the last active admin token: nobody could then create, list or revoke tokens,
   * set limits or reset nodes, short of editing the Raft log by hand.
   */
  private static void refuseLastAdmin(Services s, TokenRecord target) {
    long now = s.clock().millis();
    if (!TokenRecord.ADMIN.equals(target.role()) || target.isRevoked() || target.isExpired(now)) {
      return;
    }
    long others =
        s.read(
            st ->
                st.tokens().stream()
                    .filter(t -> TokenRecord.ADMIN.equals(t.role()))
                    .filter(t -> !t.isRevoked() && !t.isExpired(now))
                    .filter(t -> !t.sha256().equals(target.sha256()))
                    .count());
    if (others == 0) {
      throw ApiError.conflict(
          "token "
              + target.id()
              + " is the last active admin token: create another first (`kairos token create"
              + " --user NAME --admin`), then revoke this one");
    }
  }

  /** The default lifetime of a new credential of {@code role}. */
  static Duration defaultTtl(String role) {
    return switch (role) {
      case TokenRecord.JOIN -> JOIN_TTL;
      case TokenRecord.EXTENDER -> EXTENDER_TTL;
      default -> USER_TTL;
    };
  }

  private static TokenCreated create(Services s, TokenRequest req) {
    boolean admin = Boolean.TRUE.equals(req.admin());
    boolean join = Boolean.TRUE.equals(req.join());
    boolean extender = Boolean.TRUE.equals(req.extender());
    if ((admin ? 1 : 0) + (join ? 1 : 0) + (extender ? 1 : 0) > 1) {
      throw ApiError.invalid(
          "admin", "a token is one of admin, join or extender (or a user's: none)", null);
    }
    String role =
        admin
            ? TokenRecord.ADMIN
            : join ? TokenRecord.JOIN : extender ? TokenRecord.EXTENDER : TokenRecord.USER;
    String user = req.user();
    if (user == null && (join || extender)) {
      user = join ? "join" : "kube-scheduler";
    }
    if (user == null || !USER.matcher(user).matches()) {
      throw ApiError.invalid(
          "user", "user must be 1-64 letters, digits, '.', '_', '@' or '-'", "pass --user NAME");
    }
    Optional<Duration> ttl;
    try {
      ttl = req.ttl() == null ? Optional.of(defaultTtl(role)) : Tokens.parseTtl(req.ttl());
    } catch (IllegalArgumentException e) {
      throw ApiError.invalid("ttl", e.getMessage(), "e.g. --ttl 24h, --ttl 90d or --ttl never");
    }
    if (req.publicKey() != null && !extender) {
      throw ApiError.invalid(
          "publicKey", "only an extender credential may be a certificate", "add --extender");
    }
    long now = s.clock().millis();
    long expiresMs = ttl.map(d -> now + d.toMillis()).orElse(0L);
    String expiresAt = expiresMs == 0 ? null : Instant.ofEpochMilli(expiresMs).toString();
    if (req.publicKey() != null) {
      return certificate(s, req, user, now, expiresMs, expiresAt, ttl);
    }
    String token = Tokens.generate(prefix(role));
    var record = new TokenRecord(Tokens.hash(token), user, role, now, expiresMs, 0, 0, false);
    Services.check(s.commit(new AddToken(now, record)));
    return new TokenCreated(token, user, admin, record.id(), roleName(role), expiresAt, null, null);
  }

  /** An extender's client certificate for the key it sent, recorded like a token. */
  private static TokenCreated certificate(
      Services s,
      TokenRequest req,
      String user,
      long now,
      long expiresMs,
      String expiresAt,
      Optional<Duration> ttl) {
    ClusterTls tls =
        s.clusterTls()
            .orElseThrow(
                () ->
                    ApiError.conflict(
                        "this controller runs without a cluster CA (--insecure): make the"
                            + " extender a bearer token instead"));
    byte[] spki;
    PublicKey key;
    try {
      spki = Base64.getDecoder().decode(req.publicKey());
      key = KeyFactory.getInstance(algorithm(spki)).generatePublic(new X509EncodedKeySpec(spki));
    } catch (IllegalArgumentException | GeneralSecurityException e) {
      throw ApiError.invalid(
          "publicKey", "publicKey must be an EC or RSA public key (X.509, base64)", null);
    }
    String hash = Tokens.certificateKey(spki);
    if (s.read(st -> st.token(hash)).isPresent()) {
      throw ApiError.conflict("that key is certified already; make a new key");
    }
    X509Certificate cert =
        tls.certify(user, Role.EXTENDER, List.of(), key, ttl.orElse(Duration.ofDays(3650)));
    var record = new TokenRecord(hash, user, TokenRecord.EXTENDER, now, expiresMs, 0, 0, true);
    Services.check(s.commit(new AddToken(now, record)));
    return new TokenCreated(
        null,
        user,
        false,
        record.id(),
        roleName(TokenRecord.EXTENDER),
        expiresAt,
        tls.chainPem(cert),
        tls.caPem());
  }

  private static String algorithm(byte[] spki) throws GeneralSecurityException {
    for (String a : List.of("EC", "RSA")) {
      try {
        KeyFactory.getInstance(a).generatePublic(new X509EncodedKeySpec(spki));
        return a;
      } catch (GeneralSecurityException e) {
        // try the next
      }
    }
    throw new GeneralSecurityException("neither an EC nor an RSA key");
  }

  private static String prefix(String role) {
    return switch (role) {
      case TokenRecord.ADMIN -> "kadm";
      case TokenRecord.JOIN -> "kjoin";
      case TokenRecord.EXTENDER -> "kext";
      default -> "kusr";
    };
  }

  /** The role as the API names it: the stored "agent" of a join token is "join". */
  static String roleName(String role) {
    return TokenRecord.JOIN.equals(role) ? "join" : role;
  }

  static TokenView view(Services s, TokenRecord t, long nowMs) {
    long lastUsed = Math.max(t.lastUsedMs(), s.tokenUses().pending(t.sha256()).orElse(0L));
    return new TokenView(
        t.id(),
        t.user(),
        roleName(t.role()),
        t.certificate() ? "certificate" : "bearer",
        t.isRevoked() ? "revoked" : t.isExpired(nowMs) ? "expired" : "active",
        instant(t.createdMs()),
        instant(t.expiresMs()),
        instant(lastUsed),
        instant(t.revokedMs()));
  }

  private static String instant(long ms) {
    return ms == 0 ? null : Instant.ofEpochMilli(ms).toString();
  }
}
