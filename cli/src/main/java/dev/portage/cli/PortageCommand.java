package dev.portage.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The top-level {@code portage} command; each component adds a subcommand. */
@Command(
    name = "portage",
    mixinStandardHelpOptions = true,
    versionProvider = VersionProvider.class,
    subcommands = {ServerCommand.class},
    description = "Traffic components a Kubernetes platform runs between its networks.")
public final class PortageCommand implements Runnable {

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    spec.commandLine().usage(spec.commandLine().getOut());
  }

  /** Parses and runs; returns the process exit code. */
  public static int execute(String... args) {
    return new CommandLine(new PortageCommand()).execute(args);
  }
}
