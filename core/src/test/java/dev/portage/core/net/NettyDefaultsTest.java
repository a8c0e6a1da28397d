package dev.portage.core.net;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class NettyDefaultsTest {

  private String leak;
  private String legacy;

  @BeforeEach
  void save() {
    leak = System.getProperty(NettyDefaults.LEAK_PROPERTY);
    legacy = System.getProperty(NettyDefaults.LEGACY_LEAK_PROPERTY);
    System.clearProperty(NettyDefaults.LEAK_PROPERTY);
    System.clearProperty(NettyDefaults.LEGACY_LEAK_PROPERTY);
  }

  @AfterEach
  void restore() {
    set(NettyDefaults.LEAK_PROPERTY, leak);
    set(NettyDefaults.LEGACY_LEAK_PROPERTY, legacy);
  }

  private static void set(String name, String value) {
    if (value == null) {
      System.clearProperty(name);
    } else {
      System.setProperty(name, value);
    }
  }

  @Test
  void leakDetectionIsOffUnlessAsked() {
    NettyDefaults.apply();
    assertThat(System.getProperty(NettyDefaults.LEAK_PROPERTY)).isEqualTo("disabled");
  }

  @Test
  void anExplicitLevelWinsInEitherSpelling() {
    System.setProperty(NettyDefaults.LEAK_PROPERTY, "paranoid");
    NettyDefaults.apply();
    assertThat(System.getProperty(NettyDefaults.LEAK_PROPERTY)).isEqualTo("paranoid");

    System.clearProperty(NettyDefaults.LEAK_PROPERTY);
    System.setProperty(NettyDefaults.LEGACY_LEAK_PROPERTY, "simple");
    NettyDefaults.apply();
    assertThat(System.getProperty(NettyDefaults.LEAK_PROPERTY)).isNull();
  }
}
