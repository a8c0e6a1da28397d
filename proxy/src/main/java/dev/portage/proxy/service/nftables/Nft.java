package dev.portage.proxy.service.nftables;

import java.util.List;

/**
 * Runs Debian's {@code nft} binary: {@link #apply(String)} feeds a script to {@code nft -f -}, which
 * the kernel applies as one atomic transaction (all or nothing). The command is configurable so a
 * caller can prefix it (e.g. {@code ip netns exec NAME nft}). Thread-safe; each call is one process.
 */
public final class Nft {

  private final HostCommand command;

  /** @param command the nft command and any prefix, e.g. {@code ["nft"]} */
  public Nft(List<String> command) {
    this.command = new HostCommand(command);
  }

  /** The command, e.g. {@code [nft]}. */
  public List<String> command() {
    return command.command();
  }

  /**
   * Applies {@code script} with {@code nft -f -}.
   *
   * @throws NftException with nft's error output if nft refuses the script (nothing was applied),
   *     cannot be started, or does not finish in time
   */
  public void apply(String script) throws NftException {
    command.run(List.of("-f", "-"), script);
  }

  /**
   * Runs nft with {@code args} (e.g. {@code list table ip portage-proxy}) and returns its output.
   *
   * @throws NftException as for {@link #apply(String)}
   */
  public String run(List<String> args) throws NftException {
    return command.run(args, null);
  }
}
