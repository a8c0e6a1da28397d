package dev.portage.bench.tunnel;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * {@code ssh -N -L} from a free local port to the backend, through an sshd the caller started on
 * loopback: the anchor every tunnel is compared with. Closing it ends the ssh process.
 */
final class SshForward implements AutoCloseable {
  private final Process process;
  private final int localPort;

  SshForward(int sshdPort, Path key, String user, int backendPort, Path log) throws IOException, InterruptedException {
    try (ServerSocket probe = new ServerSocket(0)) {
      localPort = probe.getLocalPort();
    }
    process = new ProcessBuilder(List.of("ssh", "-N", "-T",
        "-L", "127.0.0.1:" + localPort + ":127.0.0.1:" + backendPort,
        "-p", Integer.toString(sshdPort), "-i", key.toString(),
        "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
        "-o", "ExitOnForwardFailure=yes", "-o", "LogLevel=ERROR",
        user + "@127.0.0.1"))
        .redirectErrorStream(true).redirectOutput(log.toFile()).start();
    // The forward is up once its local port accepts.
    for (int i = 0; i < 200; i++) {
      if (!process.isAlive()) {
        throw new IOException("ssh -L exited with " + process.exitValue() + "; see " + log);
      }
      try (Socket s = new Socket()) {
        s.connect(new InetSocketAddress("127.0.0.1", localPort), 1000);
        return;
      } catch (IOException notYet) {
        TimeUnit.MILLISECONDS.sleep(50);
      }
    }
    process.destroyForcibly();
    throw new IOException("ssh -L did not listen on " + localPort + " within 10 s; see " + log);
  }

  /** The {@code ssh} client process. */
  long pid() {
    return process.pid();
  }

  int localPort() {
    return localPort;
  }

  @Override
  public void close() throws InterruptedException {
    process.destroy();
    if (!process.waitFor(5, TimeUnit.SECONDS)) {
      process.destroyForcibly();
    }
  }
}
