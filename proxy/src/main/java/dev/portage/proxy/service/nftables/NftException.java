package dev.portage.proxy.service.nftables;

import java.io.IOException;

/** {@code nft} refused a transaction or could not be run; the message carries nft's own words. */
public final class NftException extends IOException {

  private static final long serialVersionUID = 1L;

  NftException(String message) {
    super(message);
  }

  NftException(String message, Throwable cause) {
    super(message, cause);
  }
}
