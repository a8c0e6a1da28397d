package dev.portage.bench.tunnel;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * nginx as shipped (Debian's package, {@code worker_processes auto}, its TLS defaults: TLS 1.2 and 1.3,
 * session tickets on) answering {@code GET /} with a 3-byte {@code 200}, on a plain and a TLS port of
 * loopback: the target of the GET dials through the tunnel, and, over TLS, the floor they are compared
 * with (one TLS handshake and one GET straight to a server). Closing it stops nginx.
 */
final class NginxPeer implements AutoCloseable {
  private final Process process;
  private final int plainPort;
  private final int tlsPort;

  NginxPeer(Path binary, BenchPki pki, Path dir) throws IOException, InterruptedException {
    if (!Files.isExecutable(binary)) {
      throw new IOException(binary + " not found (Debian: apt-get install nginx)");
    }
    plainPort = freePort();
    tlsPort = freePort();
    Files.createDirectories(dir);
    String conf = """
        worker_processes auto;
        pid %1$s/nginx.pid;
        error_log %1$s/error.log warn;
        events { worker_connections 4096; }
        http {
          access_log off;
          server {
            listen 127.0.0.1:%2$d;
            location / { return 200 "ok\\n"; }
          }
          server {
            listen 127.0.0.1:%3$d ssl;
            ssl_certificate %4$s;
            ssl_certificate_key %5$s;
            location / { return 200 "ok\\n"; }
          }
        }
        """.formatted(dir, plainPort, tlsPort, pki.cert(), pki.key());
    Path file = Files.writeString(dir.resolve("nginx.conf"), conf);
    process = new ProcessBuilder(List.of(binary.toString(), "-p", dir.toString(), "-c", file.toString(),
        "-g", "daemon off;"))
        .redirectErrorStream(true).redirectOutput(dir.resolve("nginx.out").toFile()).start();
    for (int i = 0; i < 200; i++) {
      if (!process.isAlive()) {
        throw new IOException("nginx exited with " + process.exitValue() + "; see " + dir);
      }
      if (accepts(plainPort) && accepts(tlsPort)) {
        return;
      }
      TimeUnit.MILLISECONDS.sleep(50);
    }
    close();
    throw new IOException("nginx did not listen within 10 s; see " + dir);
  }

  private static int freePort() throws IOException {
    try (ServerSocket probe = new ServerSocket(0)) {
      return probe.getLocalPort();
    }
  }

  private static boolean accepts(int port) {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress("127.0.0.1", port), 1000);
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  int plainPort() {
    return plainPort;
  }

  int tlsPort() {
    return tlsPort;
  }

  /** The master and its workers. */
  List<Long> pids() {
    List<Long> pids = new java.util.ArrayList<>();
    pids.add(process.pid());
    process.descendants().forEach(d -> pids.add(d.pid()));
    return pids;
  }

  @Override
  public void close() throws InterruptedException {
    process.destroy(); // SIGTERM: nginx's fast shutdown
    if (!process.waitFor(5, TimeUnit.SECONDS)) {
      process.destroyForcibly();
    }
  }
}
