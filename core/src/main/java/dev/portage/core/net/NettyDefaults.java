package dev.portage.core.net;

/**
 * Netty settings a Portage process runs with unless the user set them: applied by the entry point
 * before any Netty class loads (Netty reads them once, when its classes initialize). Explicit
 * {@code -D} options, such as the tests' paranoid leak detection, always win.
 *
 * <p>Leak detection is off: at Netty's default level it follows one buffer in 128 with a stack
 * trace taken when the buffer is made and another when it is released; in JFR allocation samples
 * of the sidecar and the hub under load those traces were 2 % of all bytes allocated, and each is a
 * stack walk on the event loop. Turn it back on with {@code -Dio.netty.leakDetection.level=simple}
 * (or {@code paranoid}) when hunting a leak.
 */
public final class NettyDefaults {

  /** Netty's leak detection level. */
  static final String LEAK_PROPERTY = "io.netty.leakDetection.level";

  /** Its older name, still read by Netty as a fallback. */
  static final String LEGACY_LEAK_PROPERTY = "io.netty.leakDetectionLevel";

  private NettyDefaults() {}

  /** Sets each default whose property the user has not set. Call first thing in {@code main}. */
  public static void apply() {
    if (System.getProperty(LEAK_PROPERTY) == null && System.getProperty(LEGACY_LEAK_PROPERTY) == null) {
      System.setProperty(LEAK_PROPERTY, "disabled");
    }
  }
}
