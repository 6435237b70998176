package io.kairos.agent;

import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the agent tells every task about Kairos beyond the job's own variables: where srun and
 * scontrol are ({@link SlurmBin}, installed here), and the S3 endpoint of checkpoints in object
 * storage ({@link TaskCheckpoints#S3_ENDPOINT}).
 */
final class KairosEnv {
  private static final Logger log = LoggerFactory.getLogger(KairosEnv.class);

  private KairosEnv() {}

  /** Installs srun and scontrol, and returns the variables every task gets from this agent. */
  static Map<String, String> forTasks(AgentConfig config) {
    var env = new HashMap<>(slurmBin(config));
    if (config.checkpointS3Endpoint() != null) {
      env.put(TaskCheckpoints.S3_ENDPOINT, config.checkpointS3Endpoint());
    }
    return env;
  }

  /**
   * Installs srun and scontrol for the tasks ({@link SlurmBin}) and returns what tasks are told
   * about them; empty (tasks then have no srun) when the directory cannot be written.
   */
  private static Map<String, String> slurmBin(AgentConfig config) {
    try {
      return SlurmBin.install(
          config.dataDir(), config.controllers(), Optional.ofNullable(config.caFile()));
    } catch (IOException | RuntimeException e) {
      log.warn(
          "agent {}: could not install srun and scontrol in {}/bin: {}; tasks will not find them",
          config.nodeName(),
          config.dataDir(),
          e.toString());
      return Map.of();
    }
  }
}
