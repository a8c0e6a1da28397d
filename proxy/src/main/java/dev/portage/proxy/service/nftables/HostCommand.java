package dev.portage.proxy.service.nftables;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One host tool run as a child process ({@code nft}, {@code conntrack}): arguments, a script on
 * standard input, both outputs read while it runs, a bounded wait, and a {@link NftException}
 * carrying the tool's own error message when it fails. Thread-safe; each call is one process.
 */
final class HostCommand {

  /** A transaction of 10,000 Services takes seconds; a tool that hangs this long is broken. */
  private static final long TIMEOUT_SECONDS = 120;
  /** Enough of the tool's complaint to act on; nft repeats itself for a failing script of 100,000 lines. */
  private static final int MAX_ERROR_CHARS = 4000;

  /** Blocking reads of the child's pipes; virtual threads cost nothing while they wait. */
  private static final Executor READERS = Executors.newVirtualThreadPerTaskExecutor();

  private final List<String> command;

  /** @param command the tool and any prefix, e.g. {@code ["nft"]} */
  HostCommand(List<String> command) {
    this.command = List.copyOf(Objects.requireNonNull(command, "command"));
    if (this.command.isEmpty()) {
      throw new IllegalArgumentException("command: [] (expected: at least the binary)");
    }
  }

  List<String> command() {
    return command;
  }

  /**
   * Runs the tool with {@code args}, {@code stdin} (or nothing) on its input, and returns its
   * standard output.
   *
   * @throws NftException with the tool's error output if it exits non-zero, cannot be started, or
   *     does not finish in time
   */
  String run(List<String> args, String stdin) throws NftException {
    List<String> full = new ArrayList<>(command);
    full.addAll(args);
    Process process;
    try {
      process = new ProcessBuilder(full).start();
    } catch (IOException e) {
      throw new NftException("cannot run " + String.join(" ", full) + ": " + e.getMessage()
          + " (is it installed, and does this process run as root or with CAP_NET_ADMIN?)", e);
    }
    try {
      // Read both outputs while writing: a long error output must not block nft (and us) forever.
      CompletableFuture<String> out = CompletableFuture.supplyAsync(() -> drain(process.getInputStream()), READERS);
      CompletableFuture<String> err = CompletableFuture.supplyAsync(() -> drain(process.getErrorStream()), READERS);
      try (OutputStream in = process.getOutputStream()) {
        if (stdin != null) {
          in.write(stdin.getBytes(StandardCharsets.UTF_8));
        }
      } catch (IOException e) {
        // The tool exited early (nft closes its input on a parse error): its stderr says why.
      }
      if (!process.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
        throw new NftException(String.join(" ", full) + ": no answer after " + TIMEOUT_SECONDS + " s");
      }
      String stdout = out.get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
      String stderr = err.get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
      if (process.exitValue() != 0) {
        String message = stderr.isBlank() ? stdout : stderr;
        if (message.length() > MAX_ERROR_CHARS) {
          message = message.substring(0, MAX_ERROR_CHARS) + "\n... (" + message.length() + " characters)";
        }
        throw new NftException(String.join(" ", full) + " exited " + process.exitValue() + ": " + message.strip());
      }
      return stdout;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new NftException(String.join(" ", full) + ": interrupted", e);
    } catch (ExecutionException | TimeoutException e) {
      throw new NftException(String.join(" ", full) + ": cannot read its output: " + e, e);
    } finally {
      process.destroyForcibly();
      closeQuietly(process.getInputStream());
      closeQuietly(process.getErrorStream());
    }
  }

  private static String drain(InputStream stream) {
    try (stream) {
      return new String(stream.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      return "";
    }
  }

  private static void closeQuietly(InputStream stream) {
    try {
      stream.close();
    } catch (IOException e) {
      // already closed by drain
    }
  }
}
