package dev.portage.proxy.service.nftables;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The diff between the committed and the desired table, without a kernel. */
class TableStateTest {

  private final TableState table = new TableState("ip", "t", "test");

  private static Fragment owner(String chain, String rule, String key, String value) {
    return new Fragment.Builder()
        .chain(Chain.of(chain, List.of(rule)))
        .set(SetDeclaration.map("m", "type ipv4_addr : verdict ;"))
        .element("m", key, value)
        .build();
  }

  private TableState.Transaction commit() {
    TableState.Transaction tx = table.prepare();
    table.committed(tx);
    return tx;
  }

  @Test
  void firstSyncReplacesTheWholeTableAtomically() {
    table.put("a", owner("ca", "accept", "10.0.0.1", "goto ca"));
    TableState.Transaction tx = commit();
    assertThat(tx.full()).isTrue();
    assertThat(tx.script().lines().toList()).containsExactly(
        "add table ip t { comment \"test\" ; }",
        "delete table ip t",
        "add table ip t { comment \"test\" ; }",
        "add map ip t m { type ipv4_addr : verdict ; }",
        "add chain ip t ca",
        "add rule ip t ca accept",
        "add element ip t m { 10.0.0.1 : goto ca }");
  }

  @Test
  void partialSyncWritesOnlyWhatChanged() {
    table.put("a", owner("ca", "accept", "10.0.0.1", "goto ca"));
    table.put("b", owner("cb", "accept", "10.0.0.2", "goto cb"));
    commit();
    assertThat(table.prepare().isEmpty()).isTrue();

    table.put("b", owner("cb", "drop", "10.0.0.2", "goto cb"));
    table.put("c", owner("cc", "accept", "10.0.0.3", "goto cc"));
    assertThat(commit().script().lines().toList()).containsExactly(
        "add chain ip t cc",
        "flush chain ip t cb",
        "add rule ip t cb drop",
        "add rule ip t cc accept",
        "add element ip t m { 10.0.0.3 : goto cc }");
  }

  @Test
  void changedElementIsDeletedAndAddedAndSameFragmentCostsNothing() {
    Fragment a = owner("ca", "accept", "10.0.0.1", "goto ca");
    table.put("a", a);
    commit();
    table.put("a", a);
    assertThat(table.prepare().isEmpty()).isTrue();
    table.put("a", owner("ca", "accept", "10.0.0.1", "drop"));
    assertThat(commit().script().lines().toList()).containsExactly(
        "delete element ip t m { 10.0.0.1 }",
        "add element ip t m { 10.0.0.1 : drop }");
  }

  @Test
  void removedChainIsFlushedFirstAndDeletedByTheNextTransaction() {
    table.put("a", owner("ca", "accept", "10.0.0.1", "goto ca"));
    table.put("b", owner("cb", "accept", "10.0.0.2", "goto cb"));
    commit();
    table.remove("b");
    assertThat(commit().script().lines().toList()).containsExactly(
        "delete element ip t m { 10.0.0.2 }",
        "flush chain ip t cb");
    table.put("a", owner("ca", "drop", "10.0.0.1", "goto ca"));
    assertThat(commit().script().lines().toList()).containsExactly(
        "flush chain ip t ca",
        "add rule ip t ca drop",
        "delete chain ip t cb");
    table.put("a", owner("ca", "accept", "10.0.0.1", "goto ca"));
    assertThat(commit().script()).doesNotContain("cb");
  }

  @Test
  void sharedSetAndElementLiveWhileOneOwnerWantsThem() {
    table.put("a", owner("ca", "accept", "10.0.0.9", "drop"));
    table.put("b", owner("cb", "accept", "10.0.0.9", "drop"));
    commit();
    table.remove("a");
    assertThat(commit().script()).doesNotContain("element").doesNotContain("delete map");
    table.remove("b");
    assertThat(commit().script().lines().toList())
        .containsExactly("flush chain ip t cb", "delete map ip t m", "delete chain ip t ca"); // ca: emptied before
  }

  @Test
  void aChangedSetTypeOrFailedTransactionRewritesEverything() {
    table.put("a", owner("ca", "accept", "10.0.0.1", "goto ca"));
    commit();
    table.put("x", new Fragment.Builder().set(SetDeclaration.map("m", "type ipv4_addr : ipv4_addr ;")).build());
    assertThat(table.prepare().full()).isTrue();
    table.remove("x");
    commit();
    table.put("a", owner("ca", "drop", "10.0.0.1", "goto ca"));
    table.requireFullSync(); // what the proxier does when nft refused a transaction
    assertThat(table.prepare().full()).isTrue();
  }

  @Test
  void aChainBelongsToOneOwner() {
    table.put("a", owner("ca", "accept", "10.0.0.1", "goto ca"));
    assertThatThrownBy(() -> table.put("b", owner("ca", "drop", "10.0.0.2", "goto ca")))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("chain ca of b");
  }
}
