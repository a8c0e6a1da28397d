package dev.portage.control.rules;

import com.google.protobuf.Any;
import com.google.protobuf.ProtocolStringList;
import dev.portage.api.dds.rules.AuthenticationPolicy;
import dev.portage.api.dds.rules.AuthenticationPolicySelector;
import dev.portage.api.dds.rules.AuthenticationPolicyToClient;
import dev.portage.api.dds.rules.AuthenticationSpecToClient;
import dev.portage.api.dds.rules.AuthorizationPolicy;
import dev.portage.api.dds.rules.AuthorizationPolicyRule;
import dev.portage.api.dds.rules.AuthorizationPolicyRuleToClient;
import dev.portage.api.dds.rules.AuthorizationPolicySpecToClient;
import dev.portage.api.dds.rules.AuthorizationPolicyTarget;
import dev.portage.api.dds.rules.AuthorizationPolicyToClient;
import java.util.ArrayList;
import java.util.List;

/**
 * Picks what one client gets of a type. Non-policy kinds: everything. Authentication and
 * authorization policies:
 *
 * <ol>
 *   <li>namespace scope: a policy in the root namespace applies to every client; any other only to
 *       clients of its own namespace (a client whose namespace is unknown gets root policies only);
 *   <li>AuthenticationPolicy {@code selector}: applies when it is empty or any selector matches the
 *       client; the selector is not sent;
 *   <li>AuthorizationPolicy {@code rules[].to}: a rule is kept when it has no target or the target
 *       matches the client, and sent without the target; a policy that had rules and keeps none is
 *       left out.
 * </ol>
 *
 * A selector or target matches when every non-empty list matches: {@code namespaces}, {@code
 * ipBlocks} (CIDR or single IP), {@code principals} ({@code *}, {@code prefix*}, {@code *suffix} or
 * exact; a {@code spiffe://} scheme is ignored) and their {@code not*} counterparts; a positive list
 * never matches an unknown attribute. {@code extends} name endpoint attributes dds clients do not
 * report, so they are ignored. Stateless; thread-safe.
 */
final class PolicyFilter {

  private final String rootNamespace;

  PolicyFilter(String rootNamespace) {
    this.rootNamespace = rootNamespace;
  }

  List<Any> select(TypeSnapshot snapshot, ClientIdentity client) {
    RuleKind kind = snapshot.kind();
    List<Any> out = new ArrayList<>(snapshot.entries().size());
    for (TypeSnapshot.Entry e : snapshot.entries()) {
      if (!kind.perClient()) {
        out.add(e.data());
      } else if (inScope(e.namespace(), client)) {
        Any a =
            switch (kind) {
              case AUTHENTICATION_POLICY -> authentication(e.key(), (AuthenticationPolicy) e.spec(), client);
              case AUTHORIZATION_POLICY -> authorization(e.key(), (AuthorizationPolicy) e.spec(), client);
              default -> throw new IllegalStateException("not a policy kind: " + kind);
            };
        if (a != null) {
          out.add(a);
        }
      }
    }
    return out;
  }

  private boolean inScope(String policyNamespace, ClientIdentity client) {
    return policyNamespace.equals(rootNamespace)
        || (client.namespaceKnown() && policyNamespace.equals(client.namespace()));
  }

  private static Any authentication(String key, AuthenticationPolicy p, ClientIdentity client) {
    if (p.getSelectorCount() > 0) {
      boolean any = false;
      for (AuthenticationPolicySelector s : p.getSelectorList()) {
        if (matches(s.getNamespacesList(), s.getNotNamespacesList(), s.getIpBlocksList(), s.getNotIpBlocksList(),
            s.getPrincipalsList(), s.getNotPrincipalsList(), client)) {
          any = true;
          break;
        }
      }
      if (!any) {
        return null;
      }
    }
    return Any.pack(
        AuthenticationPolicyToClient.newBuilder()
            .setKey(key)
            .setSpec(
                AuthenticationSpecToClient.newBuilder()
                    .setAction(p.getAction())
                    .addAllPortLevel(p.getPortLevelList()))
            .build());
  }

  private static Any authorization(String key, AuthorizationPolicy p, ClientIdentity client) {
    AuthorizationPolicySpecToClient.Builder spec =
        AuthorizationPolicySpecToClient.newBuilder()
            .setAction(p.getAction())
            .setSamples(p.getSamples())
            .setOrder(p.getOrder())
            .setMatchType(p.getMatchType());
    for (AuthorizationPolicyRule r : p.getRulesList()) {
      if (r.hasTo() && !matches(r.getTo(), client)) {
        continue;
      }
      AuthorizationPolicyRuleToClient.Builder rc = AuthorizationPolicyRuleToClient.newBuilder();
      if (r.hasFrom()) {
        rc.setFrom(r.getFrom());
      }
      if (r.hasWhen()) {
        rc.setWhen(r.getWhen());
      }
      spec.addRules(rc);
    }
    if (p.getRulesCount() > 0 && spec.getRulesCount() == 0) {
      return null;
    }
    return Any.pack(AuthorizationPolicyToClient.newBuilder().setKey(key).setSpec(spec).build());
  }

  private static boolean matches(AuthorizationPolicyTarget t, ClientIdentity client) {
    return matches(t.getNamespacesList(), t.getNotNamespacesList(), t.getIpBlocksList(), t.getNotIpBlocksList(),
        t.getPrincipalsList(), t.getNotPrincipalsList(), client);
  }

  private static boolean matches(
      ProtocolStringList namespaces,
      ProtocolStringList notNamespaces,
      ProtocolStringList ipBlocks,
      ProtocolStringList notIpBlocks,
      ProtocolStringList principals,
      ProtocolStringList notPrincipals,
      ClientIdentity c) {
    if (!namespaces.isEmpty() && !(c.namespaceKnown() && namespaces.contains(c.namespace()))) {
      return false;
    }
    if (c.namespaceKnown() && notNamespaces.contains(c.namespace())) {
      return false;
    }
    if (!ipBlocks.isEmpty() && !(ipIn(c.ip(), ipBlocks))) {
      return false;
    }
    if (ipIn(c.ip(), notIpBlocks)) {
      return false;
    }
    if (!principals.isEmpty() && !principalIn(c.principal(), principals)) {
      return false;
    }
    return !principalIn(c.principal(), notPrincipals);
  }

  private static boolean ipIn(String ip, List<String> blocks) {
    if (ip.isEmpty()) {
      return false;
    }
    for (String b : blocks) {
      if (IpBlock.contains(b, ip)) {
        return true;
      }
    }
    return false;
  }

  private static boolean principalIn(String principal, List<String> patterns) {
    if (principal.isEmpty()) {
      return false;
    }
    String p = stripScheme(principal);
    for (String pattern : patterns) {
      String q = stripScheme(pattern);
      if (q.equals("*")
          || q.equals(p)
          || (q.endsWith("*") && p.startsWith(q.substring(0, q.length() - 1)))
          || (q.startsWith("*") && p.endsWith(q.substring(1)))) {
        return true;
      }
    }
    return false;
  }

  private static String stripScheme(String s) {
    return s.startsWith("spiffe://") ? s.substring("spiffe://".length()) : s;
  }
}
