package io.kairos.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@code kairos install-slurm-commands}: five small scripts that run this kairos with the command's
 * name, never over a file Kairos did not write (unless {@code --force}).
 */
class InstallSlurmCommandsTest extends ClientTestSupport {
  @Test
  void writesFiveScriptsThatRunKairosWithTheirName() throws Exception {
    env.put("KAIROS_LAUNCHER", "/opt/kairos it's/kairos");

    var r = kairos("install-slurm-commands", "bin");

    assertThat(r.code()).as(r.err()).isZero();
    for (String name : InstallSlurmCommandsCommand.COMMANDS) {
      Path script = dir.resolve("bin").resolve(name);
      assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(script)))
          .isEqualTo("rwxr-xr-x");
      assertThat(Files.readString(script))
          .startsWith("#!/bin/sh\n")
          .endsWith("exec '/opt/kairos it'\\''s/kairos' " + name + " \"$@\"\n");
    }
    assertThat(r.out()).contains("export PATH=" + dir.resolve("bin") + ":$PATH");
  }

  @Test
  void theScriptPassesItsArgumentsUntouched() throws Exception {
    Path fake = dir.resolve("fake-kairos");
    Files.writeString(fake, "#!/bin/sh\nfor a in \"$@\"; do echo \"[$a]\"; done\n");
    Files.setPosixFilePermissions(fake, PosixFilePermissions.fromString("rwx------"));
    env.put("KAIROS_LAUNCHER", fake.toString());
    kairos("install-slurm-commands", "bin");

    var p =
        new ProcessBuilder(dir.resolve("bin/squeue").toString(), "-o", "%i %j", "-u", "a b")
            .redirectErrorStream(true)
            .start();
    assertThat(p.waitFor(20, TimeUnit.SECONDS)).isTrue();
    assertThat(new String(p.getInputStream().readAllBytes()))
        .isEqualTo("[squeue]\n[-o]\n[%i %j]\n[-u]\n[a b]\n");
  }

  @Test
  void aFileKairosDidNotWriteIsLeftAloneUnlessForced() throws IOException {
    Path bin = Files.createDirectories(dir.resolve("bin"));
    Files.writeString(bin.resolve("sbatch"), "#!/bin/sh\n# Slurm's own\n");
    env.put("KAIROS_LAUNCHER", "/opt/kairos/kairos");

    var refused = kairos("install-slurm-commands", "bin");
    assertThat(refused.code()).isNotZero();
    assertThat(refused.err()).contains("kairos did not write it").contains("--force");
    assertThat(Files.readString(bin.resolve("sbatch"))).contains("Slurm's own");

    assertThat(kairos("install-slurm-commands", "--force", "bin").code()).isZero();
    assertThat(Files.readString(bin.resolve("sbatch"))).contains(InstallSlurmCommandsCommand.MARK);
  }
}
