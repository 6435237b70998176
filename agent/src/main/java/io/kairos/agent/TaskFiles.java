package io.kairos.agent;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import io.kairos.agent.account.Account;
import io.kairos.agent.isolate.PrivateFiles;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * The agent's own record of a task's output files and of the account it ran as, for the log server:
 * {@code <dataDir>/tasks/<key>.task}, JSON, mode 0600, in the agent's {@code tasks/} (which no job
 * may write), beside the task's directory (which its owner may). So a job cannot point the log
 * server at another file: the record is written before the task starts, by the agent.
 *
 * @param stdout where its stdout went
 * @param stderr where its stderr went (may equal stdout)
 * @param user the account it ran as; null when the agent opened its files itself
 * @param uid as the account's, with {@code gid} and {@code groups}: the log server reads with them
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record TaskFiles(
    String stdout,
    String stderr,
    String user,
    Integer uid,
    Integer gid,
    List<Integer> groups,
    String home) {
  private static final ObjectMapper JSON =
      JsonMapper.builder().disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES).build();

  /** The record of {@code spec}: its files, and its owner when it has one. */
  static TaskFiles of(LaunchSpec spec) {
    Account o = spec.owner();
    return new TaskFiles(
        spec.stdout().toString(),
        spec.stderr().toString(),
        o == null ? null : o.name(),
        o == null ? null : o.uid(),
        o == null ? null : o.gid(),
        o == null ? null : o.groups(),
        o == null ? null : o.home());
  }

  /** The account the task ran as; empty when the agent opened its files itself. */
  public Optional<Account> owner() {
    return uid == null || gid == null
        ? Optional.empty()
        : Optional.of(
            new Account(
                user == null ? "uid " + uid : user,
                uid,
                gid,
                groups == null ? List.of(gid) : groups,
                home == null ? "/" : home));
  }

  /** The file of {@code stream} ("stdout" or "stderr"). */
  public Path file(String stream) {
    return Path.of(stream.equals("stderr") ? stderr : stdout);
  }

  /** Writes the record to {@code file} atomically, mode 0600. */
  void write(Path file) throws IOException {
    PrivateFiles.writeAtomically(file, JSON.writeValueAsBytes(this));
  }

  /** The record at {@code file}; empty when there is none (tasks of agents before it). */
  static Optional<TaskFiles> read(Path file) throws IOException {
    try {
      return Optional.of(JSON.readValue(Files.readAllBytes(file), TaskFiles.class));
    } catch (NoSuchFileException e) {
      return Optional.empty();
    }
  }
}
