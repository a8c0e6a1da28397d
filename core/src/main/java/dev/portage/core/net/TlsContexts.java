package dev.portage.core.net;

import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.ApplicationProtocolConfig;
import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.DelegatingSslContext;
import io.netty.handler.ssl.IdentityCipherSuiteFilter;
import io.netty.handler.ssl.JdkSslContext;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.OpenSslCachingX509KeyManagerFactory;
import io.netty.handler.ssl.OpenSslContextOption;
import io.netty.handler.ssl.OpenSslSessionContext;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import io.netty.util.ReferenceCountUtil;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Netty {@link SslContext}s from PEM files, for every TLS listener and dialer in Portage. A server
 * given a client CA requires client certificates signed by it (mutual TLS). Uses OpenSSL
 * (netty-tcnative BoringSSL) when it loads, the JDK otherwise. Errors name the file at fault.
 *
 * <p>The {@code *Builder} variants return a configured {@link SslContextBuilder} for callers that
 * adjust it further, e.g. gRPC's {@code GrpcSslContexts.configure(builder)}. Clients verify the
 * server's host name: create handlers with {@code newHandler(alloc, host, port)}. Stateless and
 * thread-safe; contexts are immutable and meant to be shared. Callers that build a {@code *Builder}
 * themselves pass the result through {@link #withKeyExchangeGroups}, so the JDK provider also gets
 * the configured key-exchange groups.
 */
public final class TlsContexts {

  private static final List<String> TLS13_SUITES =
      List.of("TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256");

  private static final Logger log = LoggerFactory.getLogger(TlsContexts.class);

  private TlsContexts() {}

  /** Decided once: probing OpenSSL loads a native library. */
  private static final class Provider {
    static final SslProvider INSTANCE = choose();

    private static SslProvider choose() {
      if (!OpenSsl.isAvailable()) {
        log.warn(
            "TLS provider: JDK (netty-tcnative BoringSSL did not load: {}); TLS costs several times"
                + " more CPU per byte",
            String.valueOf(OpenSsl.unavailabilityCause()));
        return SslProvider.JDK;
      }
      if (!tcnativeMatchesNetty()) {
        // Netty 4.2 calls SSL.getGroupName at the end of every handshake; tcnative builds without it
        // (2.0.74 and older) fail every OpenSSL handshake with NoSuchMethodError.
        log.warn(
            "TLS provider: JDK, because the netty-tcnative on the class path is too old for this"
                + " Netty (use netty-tcnative 2.0.84.Final or newer)");
        return SslProvider.JDK;
      }
      log.info("TLS provider: OpenSSL ({})", OpenSsl.versionString());
      return SslProvider.OPENSSL;
    }

    private static boolean tcnativeMatchesNetty() {
      try {
        Class.forName("io.netty.internal.tcnative.SSL").getMethod("getGroupName", long.class);
        return true;
      } catch (ReflectiveOperationException | LinkageError e) {
        return false;
      }
    }
  }

  /**
   * The TLS implementation in use: OpenSSL (BoringSSL) when its native library loads and matches
   * this Netty, else the JDK. Logged once, at the first call (INFO for OpenSSL, WARN for the JDK).
   */
  public static SslProvider provider() {
    return Provider.INSTANCE;
  }

  /**
   * Lets clients of the server context {@code context} resume their TLS sessions (an abbreviated
   * handshake: no certificate exchange or signature) with session tickets, as Go's {@code crypto/tls}
   * servers do by default. Netty turns tickets off for OpenSSL contexts; this turns them on with
   * BoringSSL's own ticket keys (random per process, rotated by BoringSSL), so a session resumes
   * only on the process that issued it. JDK contexts already issue tickets; they are left alone.
   *
   * <p>The server-side session cache is turned off at the same time, as Go's servers have none: a
   * ticket carries its session, and Netty's cache cost every full handshake calls from BoringSSL into
   * Java to store a session object in a synchronized map that only a client resuming by session ID
   * (not by ticket) would read.
   *
   * @return {@code context}
   */
  public static SslContext resumeSessions(SslContext context) {
    if (context.isServer() && context.sessionContext() instanceof OpenSslSessionContext sessions) {
      sessions.setTicketKeys();
      sessions.setSessionCacheEnabled(false);
    }
    return context;
  }

  /**
   * {@code context} with {@code options}' key-exchange groups on every engine it creates. OpenSSL
   * contexts already carry them (set on the builder, which cannot carry them for the JDK); a JDK
   * context is wrapped so each engine's {@code SSLParameters} name the groups (per engine, not the
   * process-wide {@code jdk.tls.namedGroups}).
   *
   * @return {@code context} itself when there is nothing to add
   */
  public static SslContext withKeyExchangeGroups(SslContext context, TlsOptions options) {
    if (options.keyExchangeGroups().isEmpty() || !(context instanceof JdkSslContext)) {
      return context;
    }
    String[] groups =
        options.keyExchangeGroups().stream()
            .map(name -> KeyExchangeGroup.of(name).jdkName())
            .toArray(String[]::new);
    return new DelegatingSslContext(context) {
      @Override
      protected void initEngine(SSLEngine engine) {
        SSLParameters parameters = engine.getSSLParameters();
        parameters.setNamedGroups(groups);
        engine.setSSLParameters(parameters);
      }
    };
  }

  /** A server context with {@link TlsOptions#defaults()}. */
  public static SslContext server(Path certChain, Path key, Path clientCa) throws IOException {
    return server(certChain, key, clientCa, TlsOptions.defaults());
  }

  /**
   * A server context.
   *
   * @param certChain PEM certificate chain, leaf first
   * @param key PEM private key of the leaf
   * @param clientCa PEM CA bundle that client certificates must chain to; {@code null} for no
   *     client authentication
   * @throws IOException naming the file when one is missing, unreadable or malformed, or when the
   *     options are not supported
   */
  public static SslContext server(Path certChain, Path key, Path clientCa, TlsOptions options)
      throws IOException {
    return build(serverBuilder(certChain, key, clientCa, options), options, "server " + certChain);
  }

  /**
   * {@link #server(Path, Path, Path, TlsOptions)} for a listener that owns the context: with OpenSSL it
   * is reference-counted, so its engines are freed by the {@code SslHandler} when a connection ends
   * instead of by a finalizer. Netty's default OpenSSL engines are finalizable: every TLS connection
   * then costs a finalizer registration, survives one more young collection and wakes the finalizer
   * thread, which on a listener taking thousands of short TLS connections shows as longer GC pauses.
   * The caller releases the context ({@code ReferenceCountUtil.release}) when its listener is closed;
   * connections still open keep it alive until they end.
   */
  public static SslContext ownedServer(Path certChain, Path key, Path clientCa, TlsOptions options)
      throws IOException {
    SslContextBuilder builder = serverBuilder(certChain, key, clientCa, options);
    if (provider() == SslProvider.OPENSSL) {
      builder.sslProvider(SslProvider.OPENSSL_REFCNT);
    }
    return build(builder, options, "server " + certChain);
  }

  /** {@link #server(Path, Path, Path, TlsOptions)} without the final {@code build()}. */
  public static SslContextBuilder serverBuilder(
      Path certChain, Path key, Path clientCa, TlsOptions options) throws IOException {
    Objects.requireNonNull(certChain, "certChain");
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(options, "options");
    List<X509Certificate> chain = PemFiles.certificates(certChain, "server certificate");
    PrivateKey privateKey = PemFiles.privateKey(key, "server key");
    requireMatchingKey(chain.get(0), privateKey, certChain, key, "server");
    SslContextBuilder builder = provider() == SslProvider.OPENSSL
        ? SslContextBuilder.forServer(cachedKeyMaterial(privateKey, chain))
        : SslContextBuilder.forServer(privateKey, chain);
    if (clientCa != null) {
      builder
          .trustManager(PemFiles.certificates(clientCa, "client CA"))
          .clientAuth(ClientAuth.REQUIRE);
    }
    return apply(builder, options, true);
  }

  /** A client context with {@link TlsOptions#defaults()}. */
  public static SslContext client(Path ca, Path cert, Path key) throws IOException {
    return client(ca, cert, key, TlsOptions.defaults());
  }

  /**
   * A client context.
   *
   * @param ca PEM CA bundle the server must chain to; {@code null} for the JDK's default trust
   *     store
   * @param cert PEM client certificate chain for mutual TLS; {@code null} together with {@code key}
   *     for none
   * @param key PEM private key of {@code cert}; {@code null} together with {@code cert}
   * @throws IllegalArgumentException if only one of {@code cert} and {@code key} is given
   * @throws IOException naming the file when one is missing, unreadable or malformed, or when the
   *     options are not supported
   */
  public static SslContext client(Path ca, Path cert, Path key, TlsOptions options)
      throws IOException {
    return build(clientBuilder(ca, cert, key, options), options, "client");
  }

  /** {@link #client(Path, Path, Path, TlsOptions)} without the final {@code build()}. */
  public static SslContextBuilder clientBuilder(Path ca, Path cert, Path key, TlsOptions options)
      throws IOException {
    Objects.requireNonNull(options, "options");
    if ((cert == null) != (key == null)) {
      throw new IllegalArgumentException(
          "cert: " + cert + ", key: " + key + " (expected: both or neither)");
    }
    SslContextBuilder builder = SslContextBuilder.forClient();
    if (ca != null) {
      builder.trustManager(PemFiles.certificates(ca, "CA"));
    }
    if (cert != null) {
      List<X509Certificate> chain = PemFiles.certificates(cert, "client certificate");
      PrivateKey privateKey = PemFiles.privateKey(key, "client key");
      requireMatchingKey(chain.get(0), privateKey, cert, key, "client");
      if (provider() == SslProvider.OPENSSL) {
        builder.keyManager(cachedKeyMaterial(privateKey, chain));
      } else {
        builder.keyManager(privateKey, chain);
      }
    }
    return apply(builder, options, false);
  }

  /**
   * The key and chain as a key manager whose native (BoringSSL) form is built once and kept. Netty's
   * default converts the Java key and chain to BoringSSL's form on every handshake (PEM-encode, parse,
   * allocate), which cost the server CPU and garbage on every TLS dial; the key files are read once at
   * startup anyway.
   */
  private static KeyManagerFactory cachedKeyMaterial(PrivateKey key, List<X509Certificate> chain) throws IOException {
    char[] password = new char[0]; // the key store lives in memory only
    try {
      KeyStore store = KeyStore.getInstance("PKCS12");
      store.load(null, null);
      store.setKeyEntry("key", key, password, chain.toArray(X509Certificate[]::new));
      KeyManagerFactory keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      keys.init(store, password);
      return new OpenSslCachingX509KeyManagerFactory(keys);
    } catch (GeneralSecurityException e) {
      throw new IOException("tls: cannot hold the key in memory: " + e.getMessage(), e);
    }
  }

  /**
   * Fails unless {@code key} belongs to {@code leaf}, by signing a probe with one and verifying it
   * with the other: providers differ in whether, and how clearly, they notice a mismatch.
   */
  private static void requireMatchingKey(
      X509Certificate leaf, PrivateKey key, Path certFile, Path keyFile, String side)
      throws IOException {
    String algorithm =
        switch (key.getAlgorithm()) {
          case "RSA" -> "SHA256withRSA";
          case "EC" -> "SHA256withECDSA";
          case "Ed25519", "EdDSA" -> "Ed25519";
          default -> null; // e.g. RSASSA-PSS needs parameters; the handshake will tell
        };
    if (algorithm == null) {
      return;
    }
    byte[] probe = "portage key check".getBytes(StandardCharsets.US_ASCII);
    boolean matches;
    try {
      Signature signer = Signature.getInstance(algorithm);
      signer.initSign(key);
      signer.update(probe);
      byte[] signature = signer.sign();
      Signature verifier = Signature.getInstance(algorithm);
      verifier.initVerify(leaf.getPublicKey());
      verifier.update(probe);
      matches = verifier.verify(signature);
    } catch (GeneralSecurityException e) {
      matches = false;
    }
    if (!matches) {
      throw new IOException(
          "tls: " + side + " key file " + keyFile + " does not match certificate file " + certFile);
    }
  }

  private static SslContextBuilder apply(
      SslContextBuilder builder, TlsOptions options, boolean server) {
    builder.sslProvider(provider()).protocols(options.protocols());
    if (!options.keyExchangeGroups().isEmpty() && provider() != SslProvider.JDK) {
      // The JDK provider gets them per engine: withKeyExchangeGroups.
      builder.option(
          OpenSslContextOption.GROUPS,
          options.keyExchangeGroups().stream()
              .map(name -> KeyExchangeGroup.of(name).openSslName())
              .toArray(String[]::new));
    }
    if (!options.cipherSuites().isEmpty()) {
      builder.ciphers(cipherSuites(options), IdentityCipherSuiteFilter.INSTANCE);
    }
    if (!options.alpnProtocols().isEmpty()) {
      builder.applicationProtocolConfig(
          new ApplicationProtocolConfig(
              ApplicationProtocolConfig.Protocol.ALPN,
              // The only failure behaviours both OpenSSL and the JDK support.
              ApplicationProtocolConfig.SelectorFailureBehavior.NO_ADVERTISE,
              ApplicationProtocolConfig.SelectedListenerFailureBehavior.ACCEPT,
              options.alpnProtocols()));
    }
    return builder;
  }

  /** The configured suites plus, like Go, the TLS 1.3 suites unless some are named. */
  private static List<String> cipherSuites(TlsOptions options) {
    List<String> suites = new ArrayList<>(options.cipherSuites());
    if (suites.stream().noneMatch(TLS13_SUITES::contains)) {
      suites.addAll(TLS13_SUITES);
    }
    return suites;
  }

  /**
   * Builds and creates one engine, so bad suites or keys fail here and not at the first handshake.
   */
  private static SslContext build(SslContextBuilder builder, TlsOptions options, String what)
      throws IOException {
    SslContext context;
    try {
      context = builder.build();
    } catch (SSLException | IllegalArgumentException e) {
      throw new IOException("tls: " + what + " context: " + e.getMessage(), e);
    }
    SSLEngine engine = null;
    try {
      engine = context.newEngine(ByteBufAllocator.DEFAULT);
    } catch (IllegalArgumentException e) {
      ReferenceCountUtil.release(context);
      throw new IOException(
          "tls: " + what + " context: unsupported option in " + options + ": " + e.getMessage(), e);
    } finally {
      ReferenceCountUtil.release(engine);
    }
    return withKeyExchangeGroups(context, options);
  }
}
