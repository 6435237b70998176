package io.kairos.cli;

import io.kairos.protocol.JobView;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code kairos logs ID}: a task's stdout (or stderr) as the controller has it, from an offset;
 * with {@code --follow}, polls for more until the log is complete and the job has ended.
 */
@Command(
    name = "logs",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = {
      "Print a job's output: task 0's stdout unless told otherwise.",
      "With -f, keep printing new output as it comes until the job has ended and its log is"
          + " complete; a job that has not started yet is waited for.",
      "(--output is ignored: the log is printed as it is.)",
      ""
    })
final class LogsCommand extends ApiCommand {
  /** Between polls when nothing new came (the API asks for 200-500 ms). */
  static final long POLL_MS = 250;

  /** After the job ended, how many empty polls to wait for a log that never says done. */
  static final int POLLS_AFTER_END = 20;

  static final String OFFSET_HEADER = "Kairos-Log-Offset";
  static final String DONE_HEADER = "Kairos-Log-Done";

  @Parameters(paramLabel = "ID", description = "The job id.")
  long id;

  @Option(
      names = "--task",
      paramLabel = "N",
      defaultValue = "0",
      description = "Which task (process) of a gang (default: ${DEFAULT-VALUE}).")
  int task;

  @Option(names = "--stderr", description = "The task's stderr instead of its stdout.")
  boolean stderr;

  @Option(
      names = {"-f", "--follow"},
      description = "Keep printing new output until the job has ended.")
  boolean follow;

  @Override
  int run(ApiClient api, PrintWriter out) throws InterruptedException {
    var text = new Utf8Text(out);
    long offset = 0;
    int emptyPolls = 0;
    int emptyPollsAfterEnd = 0;
    boolean ended = false;
    while (true) {
      var params = new LinkedHashMap<String, String>();
      params.put("task", String.valueOf(task));
      params.put("stream", stderr ? "stderr" : "stdout");
      params.put("offset", String.valueOf(offset));
      ApiClient.Response r;
      try {
        r = api.send("GET", "/api/v1/jobs/" + id + "/logs" + ApiClient.query(params), null);
      } catch (ApiException e) {
        // 409: not started yet (no logs anywhere). Following, wait for the start, unless the job
        // has ended without one.
        if (follow && e.status() == 409 && !isFinal(api)) {
          Thread.sleep(POLL_MS);
          continue;
        }
        throw e;
      }
      byte[] bytes = r.body();
      text.write(bytes);
      offset = r.header(OFFSET_HEADER).map(LogsCommand::parseOffset).orElse(offset + bytes.length);
      boolean done =
          r.header(DONE_HEADER).map(v -> v.strip().equalsIgnoreCase("true")).orElse(false);
      if (bytes.length > 0) {
        continue; // there may be more right away
      }
      if (!follow) {
        break;
      }
      // Nothing new. Stop once the log is complete and the job has ended. The job's state is
      // asked when the log says done, else every 8th poll (2 s): a log that never says done
      // (its agent lost with the job) is given POLLS_AFTER_END more polls after the end.
      emptyPolls++;
      if (!ended && (done || emptyPolls % 8 == 0)) {
        ended = isFinal(api);
      }
      if (ended && (done || ++emptyPollsAfterEnd > POLLS_AFTER_END)) {
        break;
      }
      Thread.sleep(POLL_MS);
    }
    text.finish();
    return 0;
  }

  private boolean isFinal(ApiClient api) {
    return Json.convert(api.get("/api/v1/jobs/" + id), JobView.class).state().isFinal();
  }

  private static long parseOffset(String value) {
    try {
      return Long.parseLong(value.strip());
    } catch (NumberFormatException e) {
      throw ApiException.unexpected(
          "unexpected reply from the controller: " + OFFSET_HEADER + ": '" + value + "'");
    }
  }

  /**
   * Bytes to text as they arrive: UTF-8 decoded across chunk boundaries (a character split between
   * two replies is kept until its end comes); malformed bytes become U+FFFD.
   */
  static final class Utf8Text {
    private final PrintWriter out;
    private final CharsetDecoder decoder =
        StandardCharsets.UTF_8
            .newDecoder()
            .onMalformedInput(CodingErrorAction.REPLACE)
            .onUnmappableCharacter(CodingErrorAction.REPLACE);
    private ByteBuffer pending = ByteBuffer.allocate(0);

    Utf8Text(PrintWriter out) {
      this.out = out;
    }

    void write(byte[] bytes) {
      if (bytes.length == 0) {
        return;
      }
      ByteBuffer in = ByteBuffer.allocate(pending.remaining() + bytes.length);
      in.put(pending).put(bytes).flip();
      CharBuffer chars = CharBuffer.allocate(in.remaining() + 1);
      decoder.decode(in, chars, false);
      chars.flip();
      out.append(chars);
      out.flush();
      pending = in;
    }

    void finish() {
      CharBuffer chars = CharBuffer.allocate(pending.remaining() + 2);
      decoder.decode(pending, chars, true);
      decoder.flush(chars);
      chars.flip();
      out.append(chars);
      out.flush();
    }
  }
}
