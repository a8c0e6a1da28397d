package dev.portage.proxy.service;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.BindException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import org.junit.jupiter.api.Test;

/** The test helper the dial-failure cases rely on: its port refuses and no listener can take it. */
class RefusingPortTest {

  @Test
  void refusesConnectionsAndKeepsItsPortFromListeners() throws Exception {
    InetAddress loopback = InetAddress.getLoopbackAddress();
    try (RefusingPort refusing = new RefusingPort()) {
      int port = refusing.port();
      try (Socket client = new Socket()) {
        assertThatThrownBy(() -> client.connect(new InetSocketAddress(loopback, port), 2000))
            .isInstanceOf(ConnectException.class);
      }
      // SO_REUSEADDR, as Java's and Netty's listeners set it, does not take a bound port.
      try (ServerSocket listener = new ServerSocket()) {
        listener.setReuseAddress(true);
        assertThatThrownBy(() -> listener.bind(new InetSocketAddress(loopback, port)))
            .isInstanceOf(BindException.class);
      }
    }
  }
}
