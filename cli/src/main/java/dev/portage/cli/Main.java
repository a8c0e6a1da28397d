package dev.portage.cli;

import dev.portage.core.net.NettyDefaults;

/** Entry point of the runnable jar. */
public final class Main {
  private Main() {}

  public static void main(String[] args) {
    NettyDefaults.apply(); // before anything loads Netty
    System.exit(PortageCommand.execute(args));
  }
}
