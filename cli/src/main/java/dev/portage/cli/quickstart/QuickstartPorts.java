package dev.portage.cli.quickstart;

/**
 * The ports the quickstart binds: upstream defaults where a component has them, so the printed
 * commands match the upstream docs; all zero for tests.
 */
public record QuickstartPorts(
    int fastBackend,
    int mediumBackend,
    int slowBackend,
    int tunnelHttpConnect,
    int tunnelGrpc,
    int tunnelAgent,
    int tunnelHealth,
    int agentHealth) {

  public static QuickstartPorts defaults() {
    return new QuickstartPorts(9101, 9102, 9103, 8090, 8089, 8091, 8092, 8093);
  }

  public static QuickstartPorts ephemeral() {
    return new QuickstartPorts(0, 0, 0, 0, 0, 0, 0, 0);
  }
}
