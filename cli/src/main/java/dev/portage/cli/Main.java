package dev.portage.cli;

/** Entry point of the runnable jar. */
public final class Main {
  private Main() {}

  public static void main(String[] args) {
    System.exit(PortageCommand.execute(args));
  }
}
