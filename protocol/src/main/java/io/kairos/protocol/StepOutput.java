package io.kairos.protocol;

import java.util.List;

/**
 * What a step's tasks wrote since the offsets srun last saw ({@code GET
 * /api/v1/jobs/{id}/steps/{step}/output?offsets=...}), and where the step stands.
 *
 * @param chunks new output, in rank order, stdout before stderr
 * @param offsets where each stream stands now, two per rank (stdout, stderr): pass them back
 * @param done the step has ended and every stream has been read to its end
 * @param step the step, as {@link StepView}
 */
public record StepOutput(List<Chunk> chunks, List<Long> offsets, boolean done, StepView step) {
  public StepOutput {
    chunks = List.copyOf(chunks);
    offsets = List.copyOf(offsets);
  }

  /**
   * Bytes one task wrote to one stream.
   *
   * @param rank the task's rank in the step (on an agent's reply: its local rank on the node)
   * @param stream "stdout" or "stderr"
   * @param data the bytes, base64
   */
  public record Chunk(int rank, String stream, String data) {}
}
