package dev.portage.cli;

import java.io.PrintWriter;
import java.io.StringWriter;
import picocli.CommandLine;

/** One execution of the {@code portage} command line as a user runs it: its exit code and stderr. */
record CliRun(int exitCode, String err) {
  /** Runs {@code portage args...} in-process (the real command tree, usage errors on stderr). */
  static CliRun of(String... args) {
    StringWriter err = new StringWriter();
    CommandLine cl = PortageCommand.commandLine();
    cl.setErr(new PrintWriter(err));
    return new CliRun(cl.execute(args), err.toString());
  }
}
