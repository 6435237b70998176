package io.kairos.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;
import java.util.Map;

/**
 * A job as the API shows it ({@code GET /api/v1/jobs/{id}}). Times are ISO-8601 instants (UTC),
 * absent until they happen.
 *
 * @param tasks how many processes the gang starts (one per node used)
 * @param pendingReason why a PENDING job waits (a stable code such as {@code INSUFFICIENT_GPUS}),
 *     absent otherwise
 * @param pendingDetail the same in words
 * @param attempt how many times it started (1 after its first start)
 * @param requeues how many times it went back to PENDING after starting
 * @param eligibleTime a requeued job waits (backoff) until then; absent when it may start now
 * @param checkpointDir handed to its tasks as KAIROS_CHECKPOINT_DIR, kept across requeues
 * @param excludeNodes nodes it will not run on: asked for, or nodes that failed it
 * @param exitCode once SUCCEEDED (0) or FAILED (the failed task's code); absent when cancelled
 * @param message how it ended, in words ("exit code 3 on node n1", "time limit 60s reached",
 *     "cancelled by alice")
 * @param predictedStart for a PENDING job that holds a reservation, when the scheduler expects it
 *     to start (running jobs ending at their time limits); absent otherwise
 * @param arrayJobId for an element of a job array: the array's id (its first element's job id,
 *     Slurm's %A); absent otherwise
 * @param arrayTaskId for an element of a job array: its index (Slurm's %a)
 * @param dependency the job's dependencies, normalized ("afterok:12,afterany:13"); absent when it
 *     has none
 * @param account the fair-share account it is charged to; absent when none was given and the
 *     controller has no tenancy configuration
 * @param priorityClass its priority class (which set {@code priority}); absent for none
 * @param preemptedAt when it was preempted (ISO-8601, oldest first, the latest 32); absent when
 *     never
 * @param preemptedBy the job that preempted it last (while it is being stopped: the job it makes
 *     room for); absent when never preempted
 * @param runAs the Unix account its tasks run as (recorded at submission from the user table: by
 *     default the user's own name)
 * @param redacted the fields withheld from this reader because they are the job's private data
 *     ({@code command}, {@code env}, {@code workdir}, {@code checkpointDir}; its output paths and
 *     logs are private too), shown only to its owner and admins unless the controller's {@code
 *     --private-data} setting widens it; absent when the reader sees everything
 * @param scriptBytes for a batch job (one submitted with its script): the script's size in bytes
 *     (UTF-8); absent for a job whose command runs on every node. The script's text is private
 *     data, never shown
 * @param lastCheckpoint for a job that declares checkpoints: the newest complete one Kairos
 *     recorded (the one its next attempt restores; its manifest path only for readers of the job's
 *     private data); absent when none
 * @param elastic for an elastic job ({@code gpus} to {@code maxGpus}): its current and allowed size
 *     and its resizes; absent for a job of a fixed size
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record JobView(
    long id,
    String name,
    String user,
    String queue,
    int priority,
    JobState state,
    List<String> command,
    Map<String, String> env,
    String workdir,
    int gpus,
    Integer gpusPerNode,
    int tasks,
    int cpus,
    long memoryMb,
    long timeLimitSec,
    String gpuModel,
    String submitTime,
    String startTime,
    String endTime,
    String pendingReason,
    String pendingDetail,
    int attempt,
    int requeues,
    Integer exitCode,
    String message,
    List<TaskPlacement> placement,
    String eligibleTime,
    String checkpointDir,
    List<String> excludeNodes,
    String predictedStart,
    Long arrayJobId,
    Integer arrayTaskId,
    String dependency,
    String account,
    String priorityClass,
    List<String> preemptedAt,
    Long preemptedBy,
    String runAs,
    List<String> redacted,
    Integer scriptBytes,
    CheckpointView lastCheckpoint,
    ElasticView elastic) {
  /** The fields {@link #redacted} names when a job's private data is withheld. */
  public static final List<String> PRIVATE_FIELDS =
      List.of("command", "env", "workdir", "checkpointDir");
}
