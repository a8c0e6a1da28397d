package dev.portage.cli;

import java.io.PrintWriter;
import java.io.StringWriter;
import picocli.CommandLine;

/**
 * One execution of the {@code portage} command line as a user runs it: its exit code, stdout and
 * stderr.
 */
record CliRun(int exitCode, String out, String err) {
  /**
   * Runs {@code portage args...} in-process (the real command tree; help and version on {@code
   * out}, usage errors on {@code err}).
   */
  static CliRun of(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cl = PortageCommand.commandLine();
    cl.setOut(new PrintWriter(out));
    cl.setErr(new PrintWriter(err));
    int code = cl.execute(args);
    return new CliRun(code, out.toString(), err.toString());
  }
}
