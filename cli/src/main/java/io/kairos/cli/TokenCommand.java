package io.kairos.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code kairos token}: a group; {@code token create} makes a bearer token. */
@Command(
    name = "token",
    mixinStandardHelpOptions = true,
    subcommands = {TokenCreateCommand.class},
    description = "Manage API tokens (admins only).")
final class TokenCommand implements Runnable {
  @Spec CommandSpec spec;

  @Override
  public void run() {
    throw new ParameterException(
        spec.commandLine(), "Missing subcommand: kairos token create --user NAME");
  }
}
