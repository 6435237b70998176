package io.kairos.agent.account;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class NssTest {
  @TempDir Path dir;

  @Test
  void aPasswdAndAnInitgroupsLineMakeAnAccountWithItsPrimaryGroupFirst() throws IOException {
    Account a =
        Nss.parse(
            "alice:x:1001:1001:Alice A:/home/alice:/bin/bash\n", "alice           27 1001 2000\n");
    assertThat(a)
        .isEqualTo(new Account("alice", 1001, 1001, List.of(1001, 27, 2000), "/home/alice"));
    assertThat(Nss.parse("svc:x:998:997::/:/usr/sbin/nologin", "svc").groups())
        .containsExactly(997);
    assertThat(Nss.parse("nohome:x:5:5:::/bin/sh", "").home()).isEqualTo("/");
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "alice:x:1001", "alice:x:abc:1001::/h:/s", "not a passwd line"})
  void aBrokenPasswdLineIsAnError(String line) {
    assertThatThrownBy(() -> Nss.parse(line, "")).isInstanceOf(IOException.class);
  }

  @ParameterizedTest
  @ValueSource(strings = {"alice", "a.b-c_d", "alice@example.org", "_svc", "u1"})
  void accountNames(String name) {
    assertThat(Nss.isAccountName(name)).isTrue();
  }

  /** A name getent would read as an option or a uid, or that no passwd file can hold. */
  @ParameterizedTest
  @ValueSource(strings = {"", "-rf", ".hidden", "0", "1001", "a:b", "a b", "a/b", "a\nb"})
  void notAccountNames(String name) {
    assertThat(Nss.isAccountName(name)).isFalse();
    assertThatThrownBy(() -> new Nss("getent", InstantSource.system()).find(name))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("not a Unix account name");
  }

  @Test
  void theNodesOwnNssFindsRootAndNotANameNobodyHas() throws IOException {
    var nss = Nss.system(InstantSource.system());
    assertThat(nss.find("root")).hasValueSatisfying(a -> assertThat(a.uid()).isZero());
    assertThat(nss.find("kairos-nobody-has-this-name")).isEmpty();
  }

  /** Answers are cached: a found account for a minute, a missing one for seconds. */
  @Test
  void answersAreCachedForTheirTtl() throws Exception {
    Path calls = dir.resolve("calls");
    Path getent = dir.resolve("getent");
    Files.writeString(
        getent,
        """
        #!/bin/sh
        echo "$1 $2" >> "%s"
        case "$1 $2" in
          "passwd alice") echo "alice:x:1001:1001::/home/alice:/bin/sh" ;;
          "initgroups alice") echo "alice 27" ;;
          *) exit 2 ;;
        esac
        """
            .formatted(calls));
    Files.setPosixFilePermissions(getent, PosixFilePermissions.fromString("rwx------"));
    var clock = new Clock();
    var nss = new Nss(getent.toString(), clock);

    assertThat(nss.find("alice")).isPresent();
    assertThat(nss.find("alice")).isPresent();
    assertThat(nss.find("bob")).isEmpty();
    assertThat(nss.find("bob")).isEmpty();
    assertThat(Files.readAllLines(calls))
        .containsExactly("passwd alice", "initgroups alice", "passwd bob");

    clock.now = clock.now.plus(Nss.MISSING_TTL);
    assertThat(nss.find("bob")).isEmpty();
    assertThat(nss.find("alice")).isPresent();
    assertThat(Files.readAllLines(calls)).hasSize(4);

    clock.now = clock.now.plus(Nss.TTL);
    assertThat(nss.find("alice")).hasValueSatisfying(a -> assertThat(a.groups()).contains(27));
    assertThat(Files.readAllLines(calls)).hasSize(6);
  }

  private static final class Clock implements InstantSource {
    volatile Instant now = Instant.parse("2030-01-01T00:00:00Z");

    @Override
    public Instant instant() {
      return now;
    }
  }

  @Test
  void aFailingNssIsAnErrorNotAMissingAccount() throws Exception {
    Path getent = dir.resolve("getent");
    Files.writeString(getent, "#!/bin/sh\necho 'ldap: server down' >&2\nexit 1\n");
    Files.setPosixFilePermissions(getent, PosixFilePermissions.fromString("rwx------"));
    assertThatThrownBy(() -> new Nss(getent.toString(), InstantSource.system()).find("alice"))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("ldap: server down");
  }
}
