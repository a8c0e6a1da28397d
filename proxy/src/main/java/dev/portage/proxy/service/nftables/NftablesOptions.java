package dev.portage.proxy.service.nftables;

import java.util.List;
import java.util.Objects;

/**
 * How the proxy lays out its nftables table (kube-proxy's nftables settings). Immutable.
 *
 * @param table the table's name in family {@code ip}; the proxy owns it entirely
 * @param clusterCidr pod CIDR for kube-proxy's local-traffic detector ({@code --cluster-cidr}):
 *     ClusterIP traffic from outside it is masqueraded; null to detect nothing
 * @param masqueradeAll masquerade all ClusterIP traffic ({@code --masquerade-all})
 * @param nodePortCidrs the node addresses NodePorts answer on, as CIDRs ({@code
 *     --nodeport-addresses}); empty means every local address but loopback
 * @param masqueradeBit the packet mark bit that asks for masquerading (kube-proxy: 14)
 */
public record NftablesOptions(
    String table, String clusterCidr, boolean masqueradeAll, List<String> nodePortCidrs, int masqueradeBit) {

  /** The table name the proxy uses unless told otherwise. */
  public static final String DEFAULT_TABLE = "portage-proxy";

  public NftablesOptions {
    Objects.requireNonNull(table, "table");
    if (!table.matches("[A-Za-z][A-Za-z0-9_.-]{0,63}")) {
      throw new IllegalArgumentException("table: " + table + " (expected: a letter, then letters, digits, _ . -)");
    }
    nodePortCidrs = List.copyOf(nodePortCidrs);
    if (masqueradeBit < 0 || masqueradeBit > 31) {
      throw new IllegalArgumentException("masqueradeBit: " + masqueradeBit + " (expected: 0..31)");
    }
  }

  /** kube-proxy's defaults: no detector, no masquerade-all, NodePorts on every address, bit 14. */
  public static NftablesOptions defaults() {
    return new NftablesOptions(DEFAULT_TABLE, null, false, List.of(), 14);
  }

  /** The mark as nft writes it, e.g. {@code 0x00004000}. */
  String mark() {
    return String.format("0x%08x", 1 << masqueradeBit);
  }
}
