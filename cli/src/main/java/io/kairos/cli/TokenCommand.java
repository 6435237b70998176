package io.kairos.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code kairos token}: a group; create, list and revoke credentials. */
@Command(
    name = "token",
    mixinStandardHelpOptions = true,
    subcommands = {TokenCreateCommand.class, TokenListCommand.class, TokenRevokeCommand.class},
    description = "Manage API tokens: user, admin, join and extender (admins only).")
final class TokenCommand implements Runnable {
  @Spec CommandSpec spec;

  @Override
  public void run() {
    throw new ParameterException(
        spec.commandLine(),
        "Missing subcommand: kairos token create --user NAME | list | revoke ID");
  }
}
