package dev.portage.core.testing;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.slf4j.LoggerFactory;

/**
 * Fails a test class when Netty's leak detector reports a {@code ByteBuf} that was never released.
 * Registered for every test class through JUnit's extension auto-detection (the parent pom turns it
 * on; this class is listed in {@code META-INF/services} of the core test-jar). Netty only notices a
 * leak after the buffer is collected and another buffer is allocated, so after each class we collect
 * and allocate a little to flush pending reports. A leak may be reported one class late; it is never
 * missed twice and never invented.
 */
public final class NettyLeakExtension implements AfterAllCallback {

  private static final List<String> LEAKS = new ArrayList<>();
  private static volatile boolean installed;

  @Override
  public void afterAll(ExtensionContext context) {
    List<String> found = collectLeaks();
    if (!found.isEmpty()) {
      throw new AssertionError(
          "Netty reported " + found.size() + " ByteBuf leak(s) by the end of "
              + context.getDisplayName() + ":\n" + String.join("\n---\n", found));
    }
  }

  /** Flushes Netty's pending leak reports and returns (and forgets) those seen so far. */
  static List<String> collectLeaks() {
    install();
    for (int i = 0; i < 3; i++) {
      System.gc();
      allocateAndRelease();
    }
    synchronized (LEAKS) {
      List<String> found = new ArrayList<>(LEAKS);
      LEAKS.clear();
      return found;
    }
  }

  private static void allocateAndRelease() {
    for (int i = 0; i < 64; i++) {
      ByteBuf a = PooledByteBufAllocator.DEFAULT.buffer(16);
      ByteBuf b = UnpooledByteBufAllocator.DEFAULT.directBuffer(16);
      a.release();
      b.release();
    }
  }

  private static synchronized void install() {
    if (installed) {
      return;
    }
    if (LoggerFactory.getLogger("io.netty.util.ResourceLeakDetector") instanceof Logger logger) {
      AppenderBase<ILoggingEvent> appender =
          new AppenderBase<>() {
            @Override
            protected void append(ILoggingEvent event) {
              String msg = event.getFormattedMessage();
              if (msg != null && msg.startsWith("LEAK:")) {
                synchronized (LEAKS) {
                  LEAKS.add(msg);
                }
              }
            }
          };
      appender.setContext(logger.getLoggerContext());
      appender.setName("netty-leaks");
      appender.start();
      logger.addAppender(appender);
    }
    installed = true;
  }
}
