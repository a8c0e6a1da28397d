package dev.portage.core.net;

import static dev.portage.core.net.TestRelayProxy.TIMEOUT;
import static dev.portage.core.net.TestRelayProxy.pending;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.netty.channel.Channel;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@link Relay} through a real loopback proxy on the process's transport. */
class RelayIntegrationTest {

  private final ExecutorService threads = Executors.newCachedThreadPool();
  private TestRelayProxy proxy;

  @BeforeEach
  void startProxy() throws Exception {
    proxy = new TestRelayProxy(NettyTransport.best());
  }

  @AfterEach
  void stop() throws Exception {
    proxy.close();
    threads.shutdownNow();
    assertThat(threads.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void oneMebibyteEachWayArrivesIntact() throws Exception {
    byte[] up = random(1 << 20, 1);
    byte[] down = random(1 << 20, 2);
    try (Socket client = proxy.connectClient();
        Socket server = proxy.acceptBackend()) {
      // Each side writes and reads at the same time, so neither can block the other.
      CompletableFuture<byte[]> serverGot = readAllAsync(server);
      CompletableFuture<byte[]> clientGot = readAllAsync(client);
      CompletableFuture<Void> serverSent = writeAllAsync(server, down);
      CompletableFuture<Void> clientSent = writeAllAsync(client, up);

      clientSent.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
      serverSent.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
      assertThat(sha256(serverGot.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS)))
          .isEqualTo(sha256(up));
      assertThat(sha256(clientGot.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS)))
          .isEqualTo(sha256(down));
    }
    assertThat(proxy.clientToBackend.sum()).isEqualTo(1 << 20);
    assertThat(proxy.backendToClient.sum()).isEqualTo(1 << 20);
    await().atMost(TIMEOUT).until(proxy.liveChannels::isEmpty);
  }

  @Test
  void halfCloseLetsTheServerAnswerAfterClientFinishedSending() throws Exception {
    try (Socket client = proxy.connectClient();
        Socket server = proxy.acceptBackend()) {
      client.getOutputStream().write("request".getBytes(StandardCharsets.US_ASCII));
      client.shutdownOutput();

      // The server sees the whole request and then EOF while the way back is still open.
      assertThat(new String(server.getInputStream().readAllBytes(), StandardCharsets.US_ASCII))
          .isEqualTo("request");
      assertThat(proxy.liveChannels).hasSize(2);
      server.getOutputStream().write("response".getBytes(StandardCharsets.US_ASCII));
      server.shutdownOutput();

      assertThat(new String(client.getInputStream().readAllBytes(), StandardCharsets.US_ASCII))
          .isEqualTo("response");
      await().atMost(TIMEOUT).until(proxy.liveChannels::isEmpty);
    }
    assertThat(proxy.clientToBackend.sum()).isEqualTo("request".length());
    assertThat(proxy.backendToClient.sum()).isEqualTo("response".length());
  }

  @Test
  void largeResponseAfterClientHalfCloseArrivesWhole() throws Exception {
    byte[] response = random(8 << 20, 4);
    try (Socket client = proxy.connectClient();
        Socket server = proxy.acceptBackend()) {
      client.getOutputStream().write('?');
      client.shutdownOutput();
      assertThat(server.getInputStream().readAllBytes()).hasSize(1);

      CompletableFuture<Void> serverSent = writeAllAsync(server, response);
      // The client is not reading yet, so the proxy has to wait for the half-closed side to drain.
      Channel inbound = proxy.lastInbound.get();
      await().atMost(TIMEOUT).until(() -> !inbound.isWritable());

      assertThat(sha256(client.getInputStream().readAllBytes())).isEqualTo(sha256(response));
      serverSent.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
    }
    await().atMost(TIMEOUT).until(proxy.liveChannels::isEmpty);
  }

  @Test
  void backendCloseEndsTheRelayOnceTheClientCloses() throws Exception {
    try (Socket client = proxy.connectClient();
        Socket server = proxy.acceptBackend()) {
      server.getOutputStream().write("last words".getBytes(StandardCharsets.US_ASCII));
      server.close();

      assertThat(new String(client.getInputStream().readAllBytes(), StandardCharsets.US_ASCII))
          .isEqualTo("last words");
      // A FIN is only a half-close: the proxy keeps the client's way out open until it is done too.
      assertThat(proxy.liveChannels).hasSize(2);
    }
    await().atMost(TIMEOUT).until(proxy.liveChannels::isEmpty);
  }

  @Test
  void resetByOneSideClosesBoth() throws Exception {
    try (Socket client = proxy.connectClient();
        Socket server = proxy.acceptBackend()) {
      server.setSoLinger(true, 0); // close() now sends RST
      server.close();

      assertThat(client.getInputStream().read()).isEqualTo(-1);
      await().atMost(TIMEOUT).until(proxy.liveChannels::isEmpty);
    }
  }

  @Test
  void stalledReaderPausesTheSenderInsteadOfBufferingInTheProxy() throws Exception {
    int total = 64 << 20;
    try (Socket client = proxy.connectClient();
        Socket server = proxy.acceptBackend()) {
      client.setSendBufferSize(TestRelayProxy.SMALL_BUFFER);
      AtomicLong pushed = new AtomicLong();
      MessageDigest sent = MessageDigest.getInstance("SHA-256");
      CompletableFuture<Void> writer =
          CompletableFuture.runAsync(
              () -> {
                Random random = new Random(3);
                byte[] chunk = new byte[64 * 1024];
                try {
                  OutputStream out = client.getOutputStream();
                  for (int i = 0; i < total / chunk.length; i++) {
                    random.nextBytes(chunk);
                    sent.update(chunk);
                    out.write(chunk);
                    pushed.addAndGet(chunk.length);
                  }
                  client.shutdownOutput();
                } catch (IOException e) {
                  throw new IllegalStateException(e);
                }
              },
              threads);

      // The backend does not read: the proxy's way out fills up and it must stop reading the
      // client,
      // which in turn blocks the writer.
      await().atMost(TIMEOUT).until(() -> proxy.lastOutbound.get() != null);
      Channel outbound = proxy.lastOutbound.get();
      AtomicLong lastSeen = new AtomicLong(-1);
      await()
          .atMost(TIMEOUT)
          .pollInterval(Duration.ofMillis(200))
          .until(() -> !outbound.isWritable() && pushed.get() == lastSeen.getAndSet(pushed.get()));
      assertThat(writer).isNotDone();
      assertThat(proxy.clientToBackend.sum()).isLessThan(8L << 20);
      assertThat(pending(outbound)).isLessThanOrEqualTo(256 * 1024);

      // Reading again drains everything, byte for byte.
      MessageDigest received = MessageDigest.getInstance("SHA-256");
      long got = 0;
      InputStream in = server.getInputStream();
      byte[] buffer = new byte[64 * 1024];
      for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
        received.update(buffer, 0, n);
        got += n;
      }
      writer.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
      assertThat(got).isEqualTo(total);
      assertThat(received.digest()).isEqualTo(sent.digest());
    }
    assertThat(proxy.clientToBackend.sum()).isEqualTo(total);
    // Bounded by the high water mark (64 KiB) plus one read, over the whole 64 MiB.
    assertThat(proxy.maxPendingTowardBackend.get()).isLessThanOrEqualTo(256 * 1024);
    await().atMost(TIMEOUT).until(proxy.liveChannels::isEmpty);
  }

  private CompletableFuture<byte[]> readAllAsync(Socket socket) {
    return CompletableFuture.supplyAsync(
        () -> {
          try {
            return socket.getInputStream().readAllBytes();
          } catch (IOException e) {
            throw new IllegalStateException(e);
          }
        },
        threads);
  }

  private CompletableFuture<Void> writeAllAsync(Socket socket, byte[] data) {
    return CompletableFuture.runAsync(
        () -> {
          try {
            socket.getOutputStream().write(data);
            socket.shutdownOutput();
          } catch (IOException e) {
            throw new IllegalStateException(e);
          }
        },
        threads);
  }

  static byte[] random(int size, long seed) {
    byte[] bytes = new byte[size];
    new Random(seed).nextBytes(bytes);
    return bytes;
  }

  static byte[] sha256(byte[] bytes) throws Exception {
    return MessageDigest.getInstance("SHA-256").digest(bytes);
  }
}
