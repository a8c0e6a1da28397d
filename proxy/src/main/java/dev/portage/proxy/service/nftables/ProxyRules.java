package dev.portage.proxy.service.nftables;

import dev.portage.proxy.service.model.ServiceEndpoint;
import dev.portage.proxy.service.model.ServicePort;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Translates Service ports into the proxy's nftables table, laid out like kube-proxy's nftables
 * mode: a skeleton of base chains and dispatch maps ({@link #skeleton()}), and one {@link Fragment}
 * per Service port ({@link #servicePort}). Pure: no I/O, so the layout is tested without a kernel.
 *
 * <p>The packet's path (nftables data plane):
 *
 * <pre>
 * nat-prerouting / nat-output ─▶ services: ip daddr . l4proto . dport vmap @service-ips
 *                                          (node address) l4proto . dport vmap @service-nodeports
 *   ClusterIP        ─▶ service-H-ns/svc/proto/port  [mark for masquerade] ─▶ dnat to one endpoint
 *   ClusterIP, Local ─▶ local-H-…   (endpoints on this node only)
 *   NodePort, external and LB IPs ─▶ external-H-… ─▶ service-H-… (Cluster) or local-H-… (Local)
 * filter-input/forward/output ─▶ no-endpoint-services / no-endpoint-nodeports: reject (or drop)
 * nat-postrouting ─▶ masquerading: hairpin (a pod reaching itself) and marked packets
 * </pre>
 *
 * <p>Endpoint choice is kube-proxy's {@code numgen random mod N}; what differs is where the N
 * endpoints live (see {@link EndpointSlots}): DNAT straight from the Service chain through shared
 * maps instead of one chain per endpoint and an anonymous map per Service, and hairpin traffic
 * recognised in postrouting by one set of {@code endpointIP . endpointIP} pairs instead of a rule
 * in every endpoint chain. Services with ClientIP affinity keep kube-proxy's per-endpoint chains
 * and affinity sets, which affinity needs. In userspace mode ({@code redirectPort} given) the same
 * dispatch maps lead to one {@code redirect} per Service port, to the relay's listener.
 *
 * <p>Not thread-safe: owned by the sync (its {@link EndpointSlots} remember ranges).
 */
final class ProxyRules {

  static final String SERVICE_IPS = "service-ips";
  static final String SERVICE_NODEPORTS = "service-nodeports";
  static final String NO_ENDPOINT_SERVICES = "no-endpoint-services";
  static final String NO_ENDPOINT_NODEPORTS = "no-endpoint-nodeports";
  static final String CLUSTER_IPS = "cluster-ips";
  static final String NODEPORT_IPS = "nodeport-ips";
  static final String HAIRPIN = "hairpin";
  static final String REJECT_CHAIN = "reject-chain";
  static final String MARK_FOR_MASQUERADE = "mark-for-masquerade";

  private static final String IP_KEY = "type ipv4_addr . inet_proto . inet_service : verdict ;";
  private static final String PORT_KEY = "type inet_proto . inet_service : verdict ;";
  /** knftables' priority names: dstnat = -100, srcnat = 100; the filter chains sit 10 before/after. */
  private static final int DSTNAT = -100;
  private static final int SRCNAT = 100;

  private final NftablesOptions options;
  private final EndpointSlots slots = new EndpointSlots();

  ProxyRules(NftablesOptions options) {
    this.options = Objects.requireNonNull(options, "options");
  }

  NftablesOptions options() {
    return options;
  }

  /** The base chains, dispatch chains and shared sets every table has. */
  Fragment skeleton() {
    Fragment.Builder f = new Fragment.Builder();
    f.set(SetDeclaration.map(SERVICE_IPS, IP_KEY));
    f.set(SetDeclaration.map(SERVICE_NODEPORTS, PORT_KEY));
    f.set(SetDeclaration.map(NO_ENDPOINT_SERVICES, IP_KEY));
    f.set(SetDeclaration.map(NO_ENDPOINT_NODEPORTS, PORT_KEY));
    f.set(SetDeclaration.set(CLUSTER_IPS, "type ipv4_addr ;"));
    f.set(SetDeclaration.set(HAIRPIN, "type ipv4_addr . ipv4_addr ;"));
    String nodePortGuard;
    if (options.nodePortCidrs().isEmpty()) {
      nodePortGuard = "fib daddr type local ip daddr != 127.0.0.0/8";
    } else {
      f.set(SetDeclaration.set(NODEPORT_IPS, "type ipv4_addr ; flags interval ;"));
      for (String cidr : options.nodePortCidrs()) {
        f.element(NODEPORT_IPS, cidr, "");
      }
      nodePortGuard = "ip daddr @" + NODEPORT_IPS + " fib daddr type local";
    }
    String ct = "ct state new jump ";
    f.chain(base("filter-input", "filter", "input", DSTNAT - 10,
        ct + "nodeport-endpoints-check", ct + "service-endpoints-check"));
    f.chain(base("filter-forward", "filter", "forward", DSTNAT - 10,
        ct + "service-endpoints-check", ct + "cluster-ips-check"));
    f.chain(base("filter-output", "filter", "output", DSTNAT - 10, ct + "service-endpoints-check"));
    f.chain(base("filter-output-post-dnat", "filter", "output", DSTNAT + 10, ct + "cluster-ips-check"));
    f.chain(base("nat-prerouting", "nat", "prerouting", DSTNAT, "jump services"));
    f.chain(base("nat-output", "nat", "output", DSTNAT, "jump services"));
    f.chain(base("nat-postrouting", "nat", "postrouting", SRCNAT, "jump masquerading"));
    f.chain(Chain.of("services", List.of(
        "ip daddr . meta l4proto . th dport vmap @" + SERVICE_IPS,
        nodePortGuard + " meta l4proto . th dport vmap @" + SERVICE_NODEPORTS)));
    f.chain(Chain.of("service-endpoints-check", List.of(
        "ip daddr . meta l4proto . th dport vmap @" + NO_ENDPOINT_SERVICES)));
    f.chain(Chain.of("nodeport-endpoints-check", List.of(
        nodePortGuard + " meta l4proto . th dport vmap @" + NO_ENDPOINT_NODEPORTS)));
    f.chain(Chain.of("cluster-ips-check", List.of("ip daddr @" + CLUSTER_IPS + " reject")));
    f.chain(Chain.of(REJECT_CHAIN, List.of("reject")));
    String mark = options.mark();
    f.chain(Chain.of(MARK_FOR_MASQUERADE, List.of("meta mark set meta mark or " + mark)));
    f.chain(Chain.of("masquerading", List.of(
        "ct status dnat ip saddr . ip daddr @" + HAIRPIN + " masquerade fully-random",
        "meta mark & " + mark + " == 0 return",
        "meta mark set meta mark xor " + mark,
        "masquerade fully-random")));
    return f.build();
  }

  /**
   * Everything {@code port} adds to the table.
   *
   * @param redirectPort in userspace mode, the relay's local listener port for this Service port;
   *     null in nftables mode (DNAT to the endpoints)
   */
  Fragment servicePort(ServicePort port, Integer redirectPort) {
    Fragment.Builder f = new Fragment.Builder();
    String proto = port.protocol().nft();
    String base = port.chainBase();
    String serviceChain = NftNames.hashed("service-", base);
    String localChain = NftNames.hashed("local-", base);
    String externalChain = NftNames.hashed("external-", base);
    if (port.clusterIP() != null) {
      f.element(CLUSTER_IPS, port.clusterIP(), "");
    }
    List<ServiceEndpoint> cluster = port.clusterEndpoints();
    if (redirectPort == null ? cluster.isEmpty() : port.internalEndpoints().isEmpty()) {
      for (String ip : port.serviceIPs()) {
        f.element(NO_ENDPOINT_SERVICES, ipKey(ip, proto, port.port()), "goto " + REJECT_CHAIN);
      }
      if (port.nodePort() != 0) {
        f.element(NO_ENDPOINT_NODEPORTS, proto + " . " + port.nodePort(), "goto " + REJECT_CHAIN);
      }
      return f.build();
    }
    if (redirectPort != null) {
      // Userspace: every address of the Service port leads to the relay's listener, which balances.
      f.chain(Chain.of(serviceChain, List.of("meta l4proto " + proto + " redirect to :" + redirectPort)));
      for (String ip : port.serviceIPs()) {
        f.element(SERVICE_IPS, ipKey(ip, proto, port.port()), "goto " + serviceChain);
      }
      if (port.nodePort() != 0) {
        f.element(SERVICE_NODEPORTS, proto + " . " + port.nodePort(), "goto " + serviceChain);
      }
      return f.build();
    }
    List<ServiceEndpoint> local = port.localEndpoints();
    Map<String, Chain> endpointChains = new LinkedHashMap<>();
    f.chain(selection(f, port, serviceChain, cluster, endpointChains));
    boolean localChainExists = (port.internalLocal() || port.externalLocal()) && !local.isEmpty();
    if (localChainExists) {
      f.chain(selection(f, port, localChain, local, endpointChains));
    }
    endpointChains.values().forEach(f::chain);
    if (port.clusterIP() != null) {
      String key = ipKey(port.clusterIP(), proto, port.port());
      if (!port.internalLocal()) {
        f.element(SERVICE_IPS, key, "goto " + serviceChain);
      } else if (localChainExists) {
        f.element(SERVICE_IPS, key, "goto " + localChain);
      } else {
        f.element(NO_ENDPOINT_SERVICES, key, "drop");
      }
    }
    if (port.hasExternalAddresses()) {
      List<String> rules = new ArrayList<>();
      if (!port.externalLocal()) {
        rules.add("jump " + MARK_FOR_MASQUERADE);
        rules.add("goto " + serviceChain);
      } else {
        if (options.clusterCidr() != null) {
          rules.add("ip saddr " + options.clusterCidr() + " goto " + serviceChain); // pods: short-circuit
        }
        rules.add("fib saddr type local jump " + MARK_FOR_MASQUERADE);
        rules.add("fib saddr type local goto " + serviceChain);
        rules.add(localChainExists ? "goto " + localChain : "drop");
      }
      f.chain(Chain.of(externalChain, rules));
      List<String> externalIps = new ArrayList<>(port.externalIPs());
      externalIps.addAll(port.loadBalancerIPs());
      for (String ip : externalIps) {
        f.element(SERVICE_IPS, ipKey(ip, proto, port.port()), "goto " + externalChain);
      }
      if (port.nodePort() != 0) {
        f.element(SERVICE_NODEPORTS, proto + " . " + port.nodePort(), "goto " + externalChain);
      }
    }
    return f.build();
  }

  /** Frees the endpoint ranges of chains no Service port uses any more; call after a full pass. */
  void retainChains(Set<String> live) {
    slots.retainOnly(live);
  }

  /** A chain choosing one of {@code endpoints} at random (sticky per client with affinity). */
  private Chain selection(
      Fragment.Builder f, ServicePort port, String chain, List<ServiceEndpoint> endpoints,
      Map<String, Chain> endpointChains) {
    String proto = port.protocol().nft();
    List<String> rules = new ArrayList<>();
    if (port.clusterIP() != null && (options.masqueradeAll() || options.clusterCidr() != null)) {
      String match = "ip daddr " + port.clusterIP() + " meta l4proto " + proto + " th dport " + port.port();
      if (!options.masqueradeAll()) {
        match += " ip saddr != " + options.clusterCidr();
      }
      rules.add(match + " jump " + MARK_FOR_MASQUERADE);
    }
    for (ServiceEndpoint endpoint : endpoints) {
      f.element(HAIRPIN, endpoint.ip() + " . " + endpoint.ip(), "");
    }
    if (port.affinityTimeout() != null) {
      List<String> targets = new ArrayList<>();
      for (ServiceEndpoint endpoint : endpoints) {
        String epBase = port.chainBase() + "__" + endpoint.ip() + "/" + endpoint.port();
        String endpointChain = NftNames.hashed("endpoint-", epBase);
        String affinitySet = NftNames.hashed("affinity-", epBase);
        f.set(SetDeclaration.set(affinitySet, "type ipv4_addr ; flags dynamic,timeout ; timeout "
            + port.affinityTimeout().toSeconds() + "s ;"));
        endpointChains.computeIfAbsent(endpointChain, name -> Chain.of(name, List.of(
            "update @" + affinitySet + " { ip saddr }",
            "meta l4proto " + proto + " dnat to " + endpoint.address())));
        rules.add("ip saddr @" + affinitySet + " goto " + endpointChain);
        targets.add(endpointChain);
      }
      if (targets.size() == 1) {
        rules.add("goto " + targets.get(0));
      } else {
        StringBuilder vmap = new StringBuilder("numgen random mod " + targets.size() + " vmap { ");
        for (int i = 0; i < targets.size(); i++) {
          vmap.append(i == 0 ? "" : ", ").append(i).append(" : goto ").append(targets.get(i));
        }
        rules.add(vmap.append(" }").toString());
      }
    } else if (endpoints.size() == 1) {
      rules.add("meta l4proto " + proto + " dnat to " + endpoints.get(0).address());
    } else {
      EndpointSlots.Slot slot = slots.slot(chain, port.protocol(), endpoints.size());
      f.set(EndpointSlots.declaration(slot));
      for (int i = 0; i < endpoints.size(); i++) {
        ServiceEndpoint endpoint = endpoints.get(i);
        f.element(slot.map(), Long.toString(slot.offset() + i), endpoint.ip() + " . " + endpoint.port());
      }
      rules.add("meta l4proto " + proto + " dnat ip addr . port to numgen random mod " + endpoints.size()
          + " offset " + slot.offset() + " map @" + slot.map());
    }
    return Chain.of(chain, rules);
  }

  private static Chain base(String name, String type, String hook, int priority, String... rules) {
    return new Chain(name, "type " + type + " hook " + hook + " priority " + priority + " ;", List.of(rules));
  }

  private static String ipKey(String ip, String proto, int port) {
    return ip + " . " + proto + " . " + port;
  }
}
