package dev.portage.api.linkerd;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Duration;
import dev.portage.api.linkerd.destination.DestinationGrpc;
import dev.portage.api.linkerd.destination.DestinationProfile;
import dev.portage.api.linkerd.destination.GetDestination;
import dev.portage.api.linkerd.destination.NoEndpoints;
import dev.portage.api.linkerd.destination.RequestMatch;
import dev.portage.api.linkerd.destination.RetryBudget;
import dev.portage.api.linkerd.destination.Update;
import dev.portage.api.linkerd.destination.WeightedAddr;
import dev.portage.api.linkerd.destination.WeightedAddrSet;
import dev.portage.api.linkerd.httptypes.HttpMethod;
import dev.portage.api.linkerd.meta.Metadata;
import dev.portage.api.linkerd.net.IPAddress;
import dev.portage.api.linkerd.net.IPv6;
import dev.portage.api.linkerd.net.TcpAddress;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

/** Pins the wire facts of the Linkerd Destination API (shared/specs/destination.md) to the generated code. */
class DestinationWireTest {

  private static String hex(com.google.protobuf.MessageLite m) {
    return HexFormat.of().formatHex(m.toByteArray());
  }

  @Test
  void methodNamesCarryTheUpstreamPackage() {
    assertThat(DestinationGrpc.getGetMethod().getFullMethodName())
        .isEqualTo("io.linkerd.proxy.destination.Destination/Get");
    assertThat(DestinationGrpc.getGetProfileMethod().getFullMethodName())
        .isEqualTo("io.linkerd.proxy.destination.Destination/GetProfile");
    assertThat(DestinationGrpc.SERVICE_NAME).isEqualTo("io.linkerd.proxy.destination.Destination");
  }

  @Test
  void getDestinationFieldNumbers() {
    GetDestination g =
        GetDestination.newBuilder().setScheme("k8s").setPath("a:1").setContextToken("{}").build();
    assertThat(hex(g)).isEqualTo("0a036b3873" + "1203613a31" + "1a027b7d");
  }

  @Test
  void ipv4IsOneBigEndianFixed32() {
    // 10.0.0.1 = 0x0a000001; fixed32 is little-endian on the wire; port 8080 varint 90 3f.
    TcpAddress a =
        TcpAddress.newBuilder().setIp(IPAddress.newBuilder().setIpv4(0x0a000001)).setPort(8080).build();
    assertThat(hex(a)).isEqualTo("0a05" + "0d0100000a" + "10903f");
  }

  @Test
  void ipv6IsTwoBigEndianFixed64Halves() {
    // 2001:db8::1 -> first = 0x20010db800000000, last = 1; each fixed64 little-endian on the wire.
    IPAddress ip =
        IPAddress.newBuilder()
            .setIpv6(IPv6.newBuilder().setFirst(0x20010db800000000L).setLast(1L))
            .build();
    assertThat(hex(ip)).isEqualTo("1212" + "09" + "00000000b80d0120" + "11" + "0100000000000000");
  }

  @Test
  void updateOneofFieldNumbers() {
    assertThat(hex(Update.newBuilder().setNoEndpoints(NoEndpoints.newBuilder().setExists(true)).build()))
        .isEqualTo("1a020801");
    assertThat(hex(Update.newBuilder().setNoEndpoints(NoEndpoints.getDefaultInstance()).build()))
        .isEqualTo("1a00");
    Update add =
        Update.newBuilder()
            .setAdd(WeightedAddrSet.newBuilder().addAddrs(WeightedAddr.newBuilder().setWeight(10000)))
            .build();
    // add=1 { addrs=1 { weight=3 varint 10000 (90 4e) } }
    assertThat(hex(add)).isEqualTo("0a05" + "0a03" + "18904e");
  }

  @Test
  void profileBudgetAndNameFieldNumbers() {
    DestinationProfile p =
        DestinationProfile.newBuilder()
            .setRetryBudget(
                RetryBudget.newBuilder()
                    .setRetryRatio(0.2f)
                    .setMinRetriesPerSecond(10)
                    .setTtl(Duration.newBuilder().setSeconds(10)))
            .setFullyQualifiedName("a")
            .build();
    // retry_budget=2 { ratio=1 float 0.2 (3e4ccccd LE), min=2 varint 10, ttl=3 { seconds=1 10 } }, fqn=5 "a"
    assertThat(hex(p)).isEqualTo("120b" + "0dcdcc4c3e" + "100a" + "1a02080a" + "2a0161");
  }

  @Test
  void methodMatchRegisteredAndUnregistered() {
    RequestMatch post =
        RequestMatch.newBuilder().setMethod(HttpMethod.newBuilder().setRegistered(HttpMethod.Registered.POST)).build();
    assertThat(hex(post)).isEqualTo("2a020801");
    RequestMatch custom =
        RequestMatch.newBuilder().setMethod(HttpMethod.newBuilder().setUnregistered("FOO")).build();
    assertThat(hex(custom)).isEqualTo("2a05" + "1203464f4f");
    assertThat(HttpMethod.Registered.TRACE.getNumber()).isEqualTo(8);
  }

  @Test
  void metadataDefaultAndResource() {
    assertThat(hex(Metadata.newBuilder().setDefault("x").build())).isEqualTo("0a0178");
    assertThat(
            hex(
                Metadata.newBuilder()
                    .setResource(dev.portage.api.linkerd.meta.Resource.newBuilder().setKind("S").setPort(80))
                    .build()))
        .isEqualTo("1205" + "1201533050");
  }
}
