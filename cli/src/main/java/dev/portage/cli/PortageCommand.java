package dev.portage.cli;

import dev.portage.cli.flags.FlagForms;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** The top-level {@code portage} command; each component adds a subcommand. */
@Command(
    name = "portage",
    mixinStandardHelpOptions = true,
    versionProvider = VersionProvider.class,
    description = "Traffic components a Kubernetes platform runs between its networks.",
    subcommands = {
      QuickstartCommand.class,
      ServerCommand.class,
      AgentCommand.class,
      ControlPlaneCommand.class,
      ServiceProxyCommand.class,
      SidecarCommand.class,
      HubCommand.class
    })
public final class PortageCommand implements Runnable {

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Mixin LoggingOptions logging = new LoggingOptions();

  @Override
  public void run() {
    spec.commandLine().usage(spec.commandLine().getOut());
  }

  /** A command line wired with Portage's error handling; tests use it to capture output. */
  public static CommandLine commandLine() {
    CommandLine cl = new CommandLine(new PortageCommand());
    cl.setCaseInsensitiveEnumValuesAllowed(true);
    FlagForms forms = FlagForms.install(cl);
    cl.setExecutionStrategy(
        parseResult -> {
          PortageCommand top = (PortageCommand) parseResult.commandSpec().userObject();
          top.logging.apply(FlagForms.logSettings(parseResult), logDefaults(parseResult));
          forms.warnWithoutEffect(parseResult);
          return new CommandLine.RunLast().execute(parseResult);
        });
    cl.setExecutionExceptionHandler(
        (ex, commandLine, parseResult) -> {
          commandLine.getErr().println("portage: " + messageChain(ex));
          return ex instanceof IllegalArgumentException ? 2 : 1;
        });
    return cl;
  }

  /** What the environment of the command that runs says about logging (exit 2 when malformed). */
  private static LogDefaults logDefaults(CommandLine.ParseResult result) {
    CommandLine.ParseResult leaf = result;
    while (leaf.subcommand() != null) {
      leaf = leaf.subcommand();
    }
    if (!(leaf.commandSpec().userObject() instanceof LogDefaults.Source source)) {
      return LogDefaults.NONE;
    }
    try {
      return source.logDefaults();
    } catch (IllegalArgumentException e) {
      throw new CommandLine.ParameterException(leaf.commandSpec().commandLine(), e.getMessage(), e);
    }
  }

  /**
   * The exception's message followed by its causes' ("tunnel server failed to start: Address already in
   * use"), each once: an operator needs the root cause, which wrappers tend to hide.
   */
  static String messageChain(Throwable ex) {
    StringBuilder out = new StringBuilder();
    for (Throwable t = ex; t != null; t = t.getCause() == t ? null : t.getCause()) {
      String message = t.getMessage() != null ? t.getMessage() : t.getClass().getSimpleName();
      if (out.indexOf(message) < 0) {
        out.append(out.isEmpty() ? "" : ": ").append(message);
      }
    }
    return out.toString();
  }

  /** Parses and runs; returns the process exit code. */
  public static int execute(String... args) {
    return commandLine().execute(args);
  }
}
