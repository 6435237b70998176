package io.kairos.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.kairos.agent.account.Account;
import io.kairos.protocol.JobState;
import io.kairos.protocol.JobSubmission;
import io.kairos.protocol.JobView;
import io.kairos.protocol.NodeView;
import io.kairos.protocol.Problem;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The attacks of "safe to share" on jobs and their files, end to end: a real {@code kairos server}
 * and a root {@code kairos agent} as on a GPU host, shared by two users whose Kairos names map to
 * real Unix accounts ({@code kairos users set}), each trying what a user with a token could try on
 * today's code: run as root, write /etc, read the controller's tokens and the agent's files and
 * another job's, get a token through the log endpoint by naming it as output or planting a link,
 * run a root job; and a non-root agent that must run only its own user's jobs. Skipped unless root
 * (creating the users and running as them needs it; CI runs as root).
 */
class RunAsAttackIT {
  @TempDir static Path dir;
  static TestCluster cluster;
  static Account alice;
  static Account bob;
  static String aliceToken;
  static String bobToken;
  static String adminTokenText;
  static String joinTokenText;

  @BeforeAll
  static void start() throws Exception {
    UnixUsers.assumeRoot();
    alice = UnixUsers.ensure(UnixUsers.ALICE);
    bob = UnixUsers.ensure(UnixUsers.BOB);
    // Every account may enter the cluster's directory (as /var/lib), not list it.
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx--x--x"));
    cluster = TestCluster.startShared(dir);
    cluster.agent("n1", 2, "2");
    aliceToken = cluster.token("alice");
    bobToken = cluster.token("bob");
    assertThat(kairos("users", "set", "alice", "--unix-user", UnixUsers.ALICE))
        .contains("alice's jobs now run as the Unix account kairos-alice");
    assertThat(kairos("users", "set", "bob", "--unix-user", UnixUsers.BOB)).contains("kairos-bob");
    adminTokenText = Files.readString(dir.resolve("ctl/admin.token")).strip();
    joinTokenText = Files.readString(dir.resolve("ctl/join.token")).strip();
  }

  @AfterAll
  static void stop() throws Exception {
    if (cluster != null) {
      cluster.close();
    }
  }

  static String kairos(String... args) {
    var out = new StringWriter();
    var err = new StringWriter();
    var all = new java.util.ArrayList<>(List.of(args));
    all.addAll(List.of("--server", cluster.url, "--token", cluster.adminToken));
    int code = Main.run(new PrintWriter(out), new PrintWriter(err), all.toArray(String[]::new));
    assertThat(code).as("kairos %s: %s", String.join(" ", args), err).isZero();
    return out.toString();
  }

  /** A one-CPU job on the root agent (alice's own agent "na", when it is up, is excluded). */
  static JobSubmission job(String... command) {
    return new JobSubmission(
        null,
        List.of(command),
        null,
        null,
        0,
        null,
        1,
        null,
        "1m",
        null,
        null,
        null,
        null,
        null,
        null,
        null,
        null,
        null,
        List.of("na"),
        null,
        null,
        null,
        null,
        null,
        null);
  }

  static JobSubmission withOutput(JobSubmission j, String stdout, String stderr) {
    return new JobSubmission(
        j.name(),
        j.command(),
        j.env(),
        j.workdir(),
        j.gpus(),
        j.gpusPerNode(),
        j.cpus(),
        j.memoryMb(),
        j.timeLimit(),
        j.queue(),
        j.priority(),
        j.gpuModel(),
        j.user(),
        null,
        null,
        null,
        null,
        null,
        j.excludeNodes(),
        null,
        null,
        stdout,
        stderr,
        null,
        null);
  }

  static JobSubmission onModel(JobSubmission j, String model) {
    return new JobSubmission(
        j.name(),
        j.command(),
        j.env(),
        j.workdir(),
        1,
        j.gpusPerNode(),
        0,
        j.memoryMb(),
        j.timeLimit(),
        j.queue(),
        j.priority(),
        model,
        j.user());
  }

  /** Runs {@code job} as {@code token}'s user until it ends. */
  static JobView ran(String token, JobSubmission job) throws Exception {
    long id = cluster.submit(token, job);
    TestCluster.waitFor(
        "job " + id + " ends",
        Duration.ofSeconds(60),
        () -> cluster.job(id).state().isFinal(),
        () -> cluster.job(id) + "\n" + cluster.agentLog("n1"));
    return cluster.job(id);
  }

  static String logs(String token, long id, String stream) throws Exception {
    var r = cluster.getAs(token, "/api/v1/jobs/" + id + "/logs?stream=" + stream);
    return r.statusCode() + " " + r.body();
  }

  /** The task's directory on its node ("na", alice's own agent, keeps its data elsewhere). */
  static Path taskDir(JobView j) {
    String node = j.placement().getFirst().node();
    Path data = node.equals("na") ? dir.resolve("alice-agent/data") : dir.resolve("agent-" + node);
    return data.resolve("tasks").resolve(j.id() + "-" + j.attempt() + "-0");
  }

  @Test
  void aJobRunsAsItsOwnersUidNotRoot() throws Exception {
    JobView j = ran(aliceToken, job("/bin/sh", "-c", "id -u; id -un"));

    assertThat(j.state()).as(j.message()).isEqualTo(JobState.SUCCEEDED);
    assertThat(j.runAs()).isEqualTo(UnixUsers.ALICE);
    assertThat(logs(aliceToken, j.id(), "stdout"))
        .isEqualTo("200 " + alice.uid() + "\n" + UnixUsers.ALICE + "\n");
  }

  @Test
  void aJobCannotWriteEtc() throws Exception {
    Path pwned = Path.of("/etc/kairos-pwned");
    JobView j = ran(aliceToken, job("/bin/sh", "-c", "echo pwned > " + pwned));

    assertThat(j.state()).isEqualTo(JobState.FAILED);
    assertThat(pwned).doesNotExist();
    assertThat(logs(aliceToken, j.id(), "stderr")).contains("Permission denied");
  }

  @Test
  void aJobCannotReadTheTokensTheAgentsFilesOrAnotherUsersJob() throws Exception {
    JobView bobs = ran(bobToken, job("/bin/sh", "-c", "echo bob-private; echo bob > mine.txt"));
    assertThat(bobs.state()).as(bobs.message()).isEqualTo(JobState.SUCCEEDED);
    Path agent = dir.resolve("agent-n1");
    List<Path> targets =
        List.of(
            dir.resolve("ctl/admin.token"),
            dir.resolve("ctl/join.token"),
            agent.resolve("fence/lease"),
            agent.resolve("fence/watchdog"),
            agent.resolve("tasks/" + bobs.id() + "-1-0.task"),
            taskDir(bobs).resolve("stdout.log"),
            taskDir(bobs).resolve("mine.txt"));
    var script = new StringBuilder();
    for (Path t : targets) {
      script.append("cat ").append(t).append('\n');
    }
    script.append("ls ").append(agent.resolve("tasks")).append('\n');
    script.append("ls ").append(agent.resolve("fence")).append('\n');
    script.append("exit 0\n");
    JobView j = ran(aliceToken, job("/bin/sh", "-c", script.toString()));

    assertThat(j.state()).as(j.message()).isEqualTo(JobState.SUCCEEDED);
    String out = logs(aliceToken, j.id(), "stdout");
    String err = logs(aliceToken, j.id(), "stderr");
    assertThat(out).isEqualTo("200 ");
    assertThat(err.lines().filter(l -> l.contains("Permission denied")))
        .hasSize(targets.size() + 2);
    assertThat(out + err).doesNotContain(adminTokenText, joinTokenText, "bob-private");
  }

  @Test
  void namingATokenAsOutputNeverYieldsItThroughTheLogs() throws Exception {
    String admin = dir.resolve("ctl/admin.token").toString();
    String join = dir.resolve("ctl/join.token").toString();
    JobView j = ran(aliceToken, withOutput(job("true"), admin, join));

    assertThat(j.state()).isEqualTo(JobState.FAILED);
    assertThat(j.message()).contains("kairos-alice cannot open " + admin);
    for (String token : List.of(aliceToken, cluster.adminToken)) {
      for (String stream : List.of("stdout", "stderr")) {
        String reply = logs(token, j.id(), stream);
        assertThat(reply).startsWith("403 ").doesNotContain(adminTokenText, joinTokenText);
        assertThat(TestCluster.JSON.readValue(reply.substring(4), Problem.class).detail())
            .contains("kairos-alice may not read");
      }
    }
    assertThat(Files.readString(Path.of(admin)).strip()).isEqualTo(adminTokenText);
  }

  @Test
  void aLinkPlantedAtTheOutputPathIsNotFollowed() throws Exception {
    String admin = dir.resolve("ctl/admin.token").toString();
    // Its own output file becomes a link to the admin token, once the job has it open.
    JobView j =
        ran(aliceToken, job("/bin/sh", "-c", "rm stdout.log && ln -s " + admin + " stdout.log"));

    assertThat(j.state()).as(j.message()).isEqualTo(JobState.SUCCEEDED);
    assertThat(Files.isSymbolicLink(taskDir(j).resolve("stdout.log")))
        .as("%s; stderr %s", taskDir(j), logs(aliceToken, j.id(), "stderr"))
        .isTrue();
    String reply = logs(cluster.adminToken, j.id(), "stdout");
    assertThat(reply).startsWith("403 ").contains("symbolic link").doesNotContain(adminTokenText);
  }

  @Test
  void taskOutputIsPrivateToItsUser() throws Exception {
    JobView j = ran(aliceToken, job("/bin/sh", "-c", "echo out; echo err >&2"));

    Path taskDir = taskDir(j);
    assertThat(mode(taskDir)).isEqualTo("rwx------");
    assertThat(owner(taskDir)).isEqualTo(alice.uid());
    for (String f : List.of("stdout.log", "stderr.log")) {
      assertThat(mode(taskDir.resolve(f))).as(f).isEqualTo("rw-------");
      assertThat(owner(taskDir.resolve(f))).as(f).isEqualTo(alice.uid());
    }
    assertThat(mode(taskDir.getParent())).isEqualTo("rwx--x--x");
  }

  @Test
  void aRootJobIsRefused() throws Exception {
    // The admin runs as the server's account, root: the controller refuses, naming the setting.
    var r = cluster.post("/api/v1/jobs", TestCluster.JSON.writeValueAsString(job("id")));
    Problem p = TestCluster.JSON.readValue(r, Problem.class);
    assertThat(p.status()).isEqualTo(400);
    assertThat(p.field()).isEqualTo("user");
    assertThat(p.detail()).contains("'admin'", "root", "--allow-root-jobs");
    var map = cluster.getAs(cluster.adminToken, "/api/v1/users");
    assertThat(map.body()).contains("\"name\":\"admin\",\"unixUser\":\"root\"");
  }

  /** The agent refuses root even where a controller lets a root job through. */
  @Test
  void anAgentRefusesRootJobsItself(@TempDir Path other) throws Exception {
    try (var lax = TestCluster.startShared(other, "--allow-root-jobs")) {
      lax.agent("strict", 5, "1");
      long id = lax.submit(job("id"));
      TestCluster.waitFor(
          "job " + id + " ends",
          Duration.ofSeconds(60),
          () -> lax.job(id).state().isFinal(),
          () -> lax.job(id).toString());
      JobView j = lax.job(id);
      assertThat(j.runAs()).isEqualTo("root");
      assertThat(j.state()).isEqualTo(JobState.FAILED);
      assertThat(j.message())
          .isEqualTo(
              "launch failed on node strict: job "
                  + id
                  + " runs as root (uid 0), and agent strict refuses root jobs"
                  + " (--allow-root-jobs is for a single-user machine)");
    }
  }

  @Test
  void aNonRootAgentRunsOnlyItsOwnUsersJobsAndSaysWhy() throws Exception {
    // The agent runs as kairos-alice: its jar and data directory must be hers to read.
    Path built = Path.of("target/kairos.jar");
    Path java = Path.of(ProcessHandle.current().info().command().orElse("/usr/bin/java"));
    org.junit.jupiter.api.Assumptions.assumeTrue(
        Files.exists(built) && othersMayRun(java),
        "needs cli/target/kairos.jar (mvn package) and a java that other accounts may run");
    Path home = dir.resolve("alice-agent");
    Files.createDirectories(home);
    Path jar = Files.copy(built, home.resolve("kairos.jar"), StandardCopyOption.REPLACE_EXISTING);
    Path data = home.resolve("data");
    Files.createDirectories(data);
    for (Path p : List.of(home, jar, data)) {
      Files.setAttribute(p, "unix:uid", alice.uid());
      Files.setAttribute(p, "unix:gid", alice.gid());
    }
    // As if a root agent of the same name ran here before: its cgroup directories are there, but
    // not alice's to write. Her agent must not count on them (it would fail every task).
    io.kairos.agent.isolate.Cgroups.detect("na");
    cluster.agentAs(alice.uid(), alice.gid(), jar, data, "na", 3, "1xA10");
    NodeView na = cluster.node("na").orElseThrow();
    assertThat(na.runsOnlyAs()).isEqualTo(UnixUsers.ALICE);
    assertThat(cluster.agentLog("na"))
        .contains("agent na runs as kairos-alice (not root): it runs only kairos-alice's jobs");

    long bobs = cluster.submit(bobToken, onModel(job("id", "-u"), "A10"));
    TestCluster.waitFor(
        "bob's job waits, saying why",
        Duration.ofSeconds(30),
        () -> "NO_NODE_RUNS_AS".equals(cluster.job(bobs).pendingReason()),
        () -> cluster.job(bobs).toString());
    assertThat(cluster.job(bobs).pendingDetail())
        .isEqualTo(
            "no node can run jobs as kairos-bob: na runs as kairos-alice (not root) and runs only"
                + " kairos-alice's jobs; the other nodes cannot hold it");

    JobView alices = ran(aliceToken, onModel(job("id", "-u"), "A10"));
    assertThat(alices.state()).as(alices.message()).isEqualTo(JobState.SUCCEEDED);
    assertThat(alices.placement()).extracting(t -> t.node()).containsExactly("na");
    assertThat(logs(aliceToken, alices.id(), "stdout")).isEqualTo("200 " + alice.uid() + "\n");
    assertThat(cluster.job(bobs).state()).isEqualTo(JobState.PENDING);
    cluster.post("/api/v1/jobs/" + bobs + "/cancel", "");
  }

  /** Whether an account other than root may run {@code file}: o+x on it and every parent. */
  static boolean othersMayRun(Path file) throws Exception {
    for (Path p = file.toRealPath(); p != null; p = p.getParent()) {
      if (!Files.getPosixFilePermissions(p)
          .contains(java.nio.file.attribute.PosixFilePermission.OTHERS_EXECUTE)) {
        return false;
      }
    }
    return true;
  }

  static String mode(Path p) throws Exception {
    return PosixFilePermissions.toString(
        Files.getPosixFilePermissions(p, LinkOption.NOFOLLOW_LINKS));
  }

  static int owner(Path p) throws Exception {
    return (int) Files.getAttribute(p, "unix:uid", LinkOption.NOFOLLOW_LINKS);
  }
}
