package dev.portage.core.time;

/** The one place main code reads {@link System#nanoTime()}. */
enum SystemTicker implements Ticker {
  INSTANCE;

  @Override
  public long nanoTime() {
    return System.nanoTime();
  }
}
