package dev.portage.proxy.service.nftables;

import java.util.ArrayList;
import java.util.List;

/**
 * Deletes conntrack entries with Debian's {@code conntrack} tool. UDP has no connection to close:
 * while a client keeps sending, its conntrack entry keeps the DNAT to the endpoint it first got,
 * even after that endpoint is gone. Deleting the entry makes the next packet pick a live endpoint
 * (kube-proxy's conntrack cleanup). Thread-safe; each call is one process.
 */
public final class Conntrack {

  private final HostCommand command;

  /** @param command the conntrack command and any prefix, e.g. {@code ["conntrack"]} */
  public Conntrack(List<String> command) {
    this.command = new HostCommand(command);
  }

  /**
   * Deletes the UDP entries of flows sent to {@code serviceIp:port} (any address when {@code
   * serviceIp} is null, for NodePorts) that were translated to {@code endpointIp:endpointPort}.
   *
   * @return whether any entry was deleted
   * @throws NftException if the tool fails for another reason than finding nothing
   */
  boolean deleteUdp(String serviceIp, int port, String endpointIp, int endpointPort) throws NftException {
    List<String> args = new ArrayList<>(List.of("-D", "-p", "udp"));
    if (serviceIp != null) {
      args.addAll(List.of("--orig-dst", serviceIp));
    }
    args.addAll(List.of("--orig-port-dst", Integer.toString(port),
        "--reply-src", endpointIp, "--reply-port-src", Integer.toString(endpointPort)));
    try {
      command.run(args, null);
      return true;
    } catch (NftException e) {
      if (e.getMessage().contains("0 flow entries have been deleted")) {
        return false; // conntrack exits 1 when nothing matched
      }
      throw e;
    }
  }
}
