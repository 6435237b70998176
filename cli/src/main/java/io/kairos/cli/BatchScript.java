package io.kairos.cli;

import io.kairos.protocol.JobSubmission;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;

/**
 * The directives of a batch script, read as sbatch reads them: {@code #SBATCH} lines in Slurm's
 * option words ({@link SbatchOptions}) and {@code #KAIROS} lines in the words of {@code kairos
 * submit}, from the leading comment block only: after the {@code #!} line, up to the first line
 * that is neither blank nor a comment. A directive further down is ignored, with a warning.
 *
 * <p>Example:
 *
 * <pre>
 * #!/bin/bash
 * #SBATCH --job-name=llama -N 2 --gres=gpu:h100:8
 * #SBATCH --time=1-12:00:00   # a day and a half
 * #KAIROS --max-restarts 3
 * torchrun train.py
 * </pre>
 *
 * gives name llama, gpus 16, gpusPerNode 8, gpuModel h100, timeLimit "36:00:00" and maxRestarts 3.
 * {@code #KAIROS} lines win over {@code #SBATCH} lines; the command line wins over both ({@link
 * SubmitCommand}). A bad directive is a {@link UsageException} naming the file, the line, the
 * directive and the fix; one Kairos cannot honour is a warning.
 */
final class BatchScript {
  private BatchScript() {}

  static final String SBATCH = "#SBATCH";
  static final String KAIROS = "#KAIROS";

  /** Options of {@code kairos submit} that are about the client, not the job. */
  private static final Set<String> CLIENT_OPTIONS =
      Set.of("--server", "--token", "--output", "--wait", "--help", "--version");

  private static final Pattern DIRECTIVE = Pattern.compile("#(SBATCH|KAIROS)(\\s.*)?");

  /**
   * What the directives ask for.
   *
   * @param sbatch the {@code #SBATCH} lines as a partial submission (no command)
   * @param kairos the {@code #KAIROS} lines as a partial submission (no command)
   * @param warnings one line each, without the {@code kairos: } prefix
   * @param export the {@code --export} asked for (script or command line); null when none
   */
  record Directives(
      JobSubmission sbatch, JobSubmission kairos, List<String> warnings, String export) {}

  /**
   * True when a file without {@code #!} is still a script: named *.sh or *.bash, or with a
   * directive in its first lines. Such a file runs with /bin/sh.
   */
  static boolean isShellScript(Path file, String text) {
    String name = file.getFileName().toString();
    if (name.endsWith(".sh") || name.endsWith(".bash")) {
      return true;
    }
    for (String line : leadingBlock(text.lines().toList())) {
      if (DIRECTIVE.matcher(line.strip()).matches()) {
        return true;
      }
    }
    return false;
  }

  /** Reads the file as text (bad bytes replaced: a script need not be UTF-8). */
  static String text(Path file) {
    try {
      return new String(Files.readAllBytes(file), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UsageException(file + ": cannot read: " + ApiClient.describe(e));
    }
  }

  /** The directives of the script {@code text}; {@code fileName} names it in messages. */
  static Directives parse(String fileName, String text) {
    return parse(fileName, text, List.of());
  }

  /**
   * The directives of the script {@code text}, with sbatch's own options from its command line
   * ({@code commandLine}, in Slurm's words) over its {@code #SBATCH} lines, as sbatch reads them.
   */
  static Directives parse(String fileName, String text, List<String> commandLine) {
    List<String> lines = text.lines().toList();
    int blockEnd = leadingBlock(lines).size();
    var sbatch = new SbatchOptions(fileName);
    var kairosTokens = new ArrayList<String>();
    var warnings = new ArrayList<String>();
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i).strip();
      var m = DIRECTIVE.matcher(line);
      if (!m.matches()) {
        continue;
      }
      String prefix = "#" + m.group(1);
      int lineNumber = i + 1;
      if (i >= blockEnd) {
        warnings.add(
            prefix
                + " on line "
                + lineNumber
                + " of "
                + fileName
                + " comes after the"
                + " first command and was ignored (as sbatch does); move it above the first command");
        continue;
      }
      String where = fileName + " line " + lineNumber + ": " + line;
      List<String> tokens = tokens(m.group(2) == null ? "" : m.group(2), where);
      if (tokens.isEmpty()) {
        throw new UsageException(where + ": no option; write e.g. " + prefix + " --time=1:00:00");
      }
      if (prefix.equals(SBATCH)) {
        sbatch.apply(lineNumber, tokens, warnings);
      } else {
        checkKairos(fileName, lineNumber, tokens, warnings);
        kairosTokens.addAll(tokens);
      }
    }
    if (!commandLine.isEmpty()) {
      sbatch.apply(SbatchOptions.COMMAND_LINE, commandLine, warnings);
    }
    JobSubmission kairos = kairosTokens.isEmpty() ? null : kairosLayer(kairosTokens, null);
    JobSubmission fromSbatch = sbatch.build(warnings);
    return new Directives(fromSbatch, kairos, List.copyOf(warnings), sbatch.export());
  }

  /**
   * The lines after {@code #!} up to the first that is neither blank nor a comment, with the {@code
   * #!} line itself.
   */
  static List<String> leadingBlock(List<String> lines) {
    int i = 0;
    while (i < lines.size()) {
      String line = lines.get(i).strip();
      boolean shebang = i == 0 && line.startsWith("#!");
      if (!shebang && !line.isEmpty() && !line.startsWith("#")) {
        break;
      }
      i++;
    }
    return lines.subList(0, i);
  }

  /** One {@code #KAIROS} line on its own: errors and warnings name it. */
  private static void checkKairos(
      String fileName, int lineNumber, List<String> tokens, List<String> warnings) {
    String where =
        fileName + " line " + lineNumber + ": " + KAIROS + " " + String.join(" ", tokens);
    kairosLayer(tokens, where);
    ParseResult parsed = parseSubmitOptions(tokens, where).getParseResult();
    for (OptionSpec option : parsed.matchedOptions()) {
      if (CLIENT_OPTIONS.contains(option.longestName())) {
        warnings.add(
            KAIROS
                + " "
                + option.longestName()
                + " is an option of the kairos command,"
                + " not of the job, and was ignored ("
                + fileName
                + " line "
                + lineNumber
                + "); give it on the command line");
      }
    }
  }

  /** {@code #KAIROS} options as a partial submission; {@code where} (or null) for errors. */
  private static JobSubmission kairosLayer(List<String> tokens, String where) {
    CommandLine cli = parseSubmitOptions(tokens, where);
    SubmitCommand options = cli.getCommand();
    if (!options.args.isEmpty()) {
      throw new UsageException(
          where
              + ": '"
              + options.args.getFirst()
              + "' is not an option;"
              + " #KAIROS lines take the options of kairos submit, e.g. #KAIROS --gpus 8");
    }
    try {
      return options.flags();
    } catch (UsageException e) {
      throw new UsageException(where + ": " + e.getMessage());
    }
  }

  private static CommandLine parseSubmitOptions(List<String> tokens, String where) {
    var cli = new CommandLine(new SubmitCommand());
    cli.setOverwrittenOptionsAllowed(true);
    try {
      cli.parseArgs(tokens.toArray(String[]::new));
    } catch (ParameterException e) {
      throw new UsageException(
          where
              + ": "
              + Json.firstLine(e.getMessage())
              + "; use the options of kairos submit"
              + " (kairos submit --help)");
    }
    return cli;
  }

  /**
   * The words of a directive, split as a shell would: whitespace separates, single and double
   * quotes group, a backslash escapes, and an unquoted {@code #} after whitespace starts a comment.
   */
  static List<String> tokens(String text, String where) {
    var out = new ArrayList<String>();
    var word = new StringBuilder();
    boolean inWord = false;
    char quote = 0;
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (quote != 0) {
        if (c == quote) {
          quote = 0;
        } else if (c == '\\' && quote == '"' && i + 1 < text.length()) {
          word.append(text.charAt(++i));
        } else {
          word.append(c);
        }
      } else if (c == '\'' || c == '"') {
        quote = c;
        inWord = true;
      } else if (c == '\\' && i + 1 < text.length()) {
        word.append(text.charAt(++i));
        inWord = true;
      } else if (Character.isWhitespace(c)) {
        if (inWord) {
          out.add(word.toString());
          word.setLength(0);
          inWord = false;
        }
      } else if (c == '#' && !inWord) {
        break;
      } else {
        word.append(c);
        inWord = true;
      }
    }
    if (quote != 0) {
      throw new UsageException(where + ": a quote (" + quote + ") is not closed; close it");
    }
    if (inWord) {
      out.add(word.toString());
    }
    return out;
  }
}
