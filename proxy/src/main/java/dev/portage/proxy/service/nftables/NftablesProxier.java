package dev.portage.proxy.service.nftables;

import dev.portage.core.time.Ticker;
import dev.portage.proxy.service.model.ClusterSnapshot;
import dev.portage.proxy.service.model.ServicePort;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * kube-proxy's {@code syncProxyRules} for nftables: brings the proxy's own table in line with a
 * {@link ClusterSnapshot} in one atomic {@code nft -f -} transaction per sync. The first sync, the
 * one after a failure and those asked for with {@link #requireFullSync()} rewrite the whole table;
 * the others rewrite only the chains and elements of Service ports that changed, against the
 * committed state kept in memory (the kernel is never listed). After a sync that removed UDP
 * endpoints, their conntrack entries are deleted.
 *
 * <p>Serves both data planes: DNAT to the endpoints ({@code nftables} mode), or, given a relay port
 * per Service port, a redirect to the relay's listener ({@code userspace} mode).
 *
 * <p>Not thread-safe: call {@link #sync} from one thread at a time (the proxy's sync runner).
 */
public final class NftablesProxier {

  private static final Logger log = LoggerFactory.getLogger(NftablesProxier.class);
  private static final String SKELETON = "";

  private final ProxyRules rules;
  private final TableState table;
  private final Nft nft;
  private final Conntrack conntrack;
  private final Ticker ticker;
  /** The ports behind the committed fragments, to skip unchanged ones and find stale UDP flows. */
  private Map<String, ServicePort> ports = Map.of();
  private Map<String, Integer> redirects = Map.of();

  /**
   * @param options the table's layout
   * @param nft runs {@code nft}
   * @param conntrack deletes stale UDP flows; null to skip that
   * @param ticker times each {@code nft} run
   */
  public NftablesProxier(NftablesOptions options, Nft nft, Conntrack conntrack, Ticker ticker) {
    this.rules = new ProxyRules(Objects.requireNonNull(options, "options"));
    this.table = new TableState("ip", options.table(), "rules for portage service-proxy");
    this.nft = Objects.requireNonNull(nft, "nft");
    this.conntrack = conntrack;
    this.ticker = Objects.requireNonNull(ticker, "ticker");
    table.put(SKELETON, rules.skeleton());
  }

  /** Makes the next sync rewrite the whole table (kube-proxy's periodic full resync). */
  public void requireFullSync() {
    table.requireFullSync();
  }

  /**
   * Brings the kernel's table to {@code snapshot}.
   *
   * @param redirectPorts userspace mode: the relay's listener port by Service port id (ports
   *     without one are not served); null in nftables mode
   * @return what the sync did
   * @throws NftException if nft refused the transaction; the table is unchanged and the next sync
   *     rewrites it whole
   */
  public SyncResult sync(ClusterSnapshot snapshot, Map<String, Integer> redirectPorts) throws NftException {
    Map<String, ServicePort> next = snapshot.ports();
    Map<String, Integer> nextRedirects = redirectPorts == null ? Map.of() : Map.copyOf(redirectPorts);
    int changed = 0;
    for (String owner : ports.keySet()) {
      if (!next.containsKey(owner) || (redirectPorts != null && !nextRedirects.containsKey(owner))) {
        table.remove(owner);
        changed++;
      }
    }
    for (Map.Entry<String, ServicePort> entry : next.entrySet()) {
      String id = entry.getKey();
      ServicePort port = entry.getValue();
      Integer redirect = nextRedirects.get(id);
      if (redirectPorts != null && redirect == null) {
        continue; // userspace: no listener for it (yet)
      }
      ServicePort before = ports.get(id);
      if ((port == before || port.equals(before)) && Objects.equals(redirect, redirects.get(id))
          && table.fragment(id) != null) {
        continue;
      }
      table.put(id, rules.servicePort(port, redirect));
      changed++;
    }
    rules.retainChains(table.chainNames());
    TableState.Transaction transaction = table.prepare();
    if (transaction.isEmpty()) {
      ports = redirectPorts == null ? next : withRedirects(next, nextRedirects);
      redirects = nextRedirects;
      return new SyncResult(false, 0, changed, 0, 0);
    }
    long applyStart = ticker.nanoTime();
    try {
      nft.apply(transaction.script());
    } catch (NftException e) {
      table.requireFullSync();
      throw e;
    }
    long applyNanos = ticker.nanoTime() - applyStart;
    table.committed(transaction);
    int flows = redirectPorts == null ? deleteStaleUdpFlows(ports, next) : 0;
    ports = redirectPorts == null ? next : withRedirects(next, nextRedirects);
    redirects = nextRedirects;
    return new SyncResult(transaction.full(), transaction.full() ? -1 : transaction.commands(), changed, flows,
        applyNanos);
  }

  /** In userspace mode only the ports with a listener are in the table. */
  private static Map<String, ServicePort> withRedirects(Map<String, ServicePort> ports, Map<String, Integer> redirects) {
    Map<String, ServicePort> kept = new HashMap<>();
    ports.forEach((id, port) -> {
      if (redirects.containsKey(id)) {
        kept.put(id, port);
      }
    });
    return kept;
  }

  /** The script the next sync would apply, without applying it (for tests and debugging). */
  String pendingScript() {
    return table.prepare().script();
  }

  /** The desired table, for tests. */
  TableState table() {
    return table;
  }

  /**
   * Deletes the proxy's table (kube-proxy's {@code --cleanup}); the next sync recreates it.
   *
   * @throws NftException if nft fails for another reason than the table being absent
   */
  public void deleteTable() throws NftException {
    try {
      nft.apply("add table ip " + rules.options().table() + "\ndelete table ip " + rules.options().table() + "\n");
    } finally {
      table.requireFullSync();
    }
  }

  private int deleteStaleUdpFlows(Map<String, ServicePort> before, Map<String, ServicePort> after) {
    if (conntrack == null) {
      return 0;
    }
    List<StaleUdpFlow> stale = StaleUdpFlow.between(before, after);
    int deleted = 0;
    for (StaleUdpFlow flow : stale) {
      try {
        if (conntrack.deleteUdp(flow.serviceIp(), flow.port(), flow.endpointIp(), flow.endpointPort())) {
          deleted++;
        }
      } catch (NftException e) {
        log.warn("Cannot delete stale UDP conntrack entries to {}:{} via {}:{}: {}",
            flow.serviceIp() == null ? "*" : flow.serviceIp(), flow.port(), flow.endpointIp(),
            flow.endpointPort(), e.getMessage());
      }
    }
    if (!stale.isEmpty()) {
      log.debug("Conntrack cleanup: {} stale UDP flow patterns, {} had entries", stale.size(), deleted);
    }
    return deleted;
  }

  /**
   * What one sync did.
   *
   * @param full whether it rewrote the whole table
   * @param commands nft commands of a partial sync (0: nothing to apply), -1 for a full one
   * @param changedPorts Service ports whose rules were recomputed
   * @param udpFlowsDeleted conntrack patterns that deleted at least one entry
   * @param nftNanos time {@code nft -f -} took (process start to exit)
   */
  public record SyncResult(boolean full, int commands, int changedPorts, int udpFlowsDeleted, long nftNanos) {

    /** Whether a transaction ran. */
    public boolean applied() {
      return full || commands > 0;
    }
  }
}
