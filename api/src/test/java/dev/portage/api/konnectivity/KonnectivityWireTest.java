package dev.portage.api.konnectivity;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

/** Pins the wire facts of the Konnectivity protocol (shared/specs/konnectivity.md) to the generated code. */
class KonnectivityWireTest {

  @Test
  void methodNamesCarryNoPackagePrefix() {
    assertThat(ProxyServiceGrpc.getProxyMethod().getFullMethodName()).isEqualTo("ProxyService/Proxy");
    assertThat(AgentServiceGrpc.getConnectMethod().getFullMethodName())
        .isEqualTo("AgentService/Connect");
  }

  @Test
  void dialRequestEncodesWithUpstreamFieldNumbers() {
    Packet p =
        Packet.newBuilder()
            .setType(PacketType.DIAL_REQ)
            .setDialRequest(
                DialRequest.newBuilder().setProtocol("tcp").setAddress("a:1").setRandom(5))
            .build();
    // type=1 varint 0 is omitted (proto3 default); dialRequest=2 length-delimited;
    // inside: protocol=1 "tcp", address=2 "a:1", random=3 varint 5.
    assertThat(HexFormat.of().formatHex(p.toByteArray()))
        .isEqualTo("120c" + "0a03746370" + "1203613a31" + "1805");
  }

  @Test
  void dataAndCloseFramesUseUpstreamFieldNumbers() {
    Packet data =
        Packet.newBuilder()
            .setType(PacketType.DATA)
            .setData(Data.newBuilder().setConnectID(7).setData(ByteString.copyFromUtf8("hi")))
            .build();
    assertThat(HexFormat.of().formatHex(data.toByteArray())).isEqualTo("0804" + "2206" + "0807" + "1a026869");

    Packet closeRsp =
        Packet.newBuilder()
            .setType(PacketType.CLOSE_RSP)
            .setCloseResponse(CloseResponse.newBuilder().setConnectID(3).setError("x"))
            .build();
    assertThat(HexFormat.of().formatHex(closeRsp.toByteArray()))
        .isEqualTo("0803" + "3205" + "0a0178" + "1003");

    Packet drain = Packet.newBuilder().setType(PacketType.DRAIN).setDrain(Drain.getDefaultInstance()).build();
    assertThat(HexFormat.of().formatHex(drain.toByteArray())).isEqualTo("0806" + "4200");

    Packet dialCls =
        Packet.newBuilder().setType(PacketType.DIAL_CLS).setCloseDial(CloseDial.newBuilder().setRandom(9)).build();
    assertThat(HexFormat.of().formatHex(dialCls.toByteArray())).isEqualTo("0805" + "3a02" + "0809");
  }

  @Test
  void dialResponseAndCloseRequestFieldNumbers() {
    Packet rsp =
        Packet.newBuilder()
            .setType(PacketType.DIAL_RSP)
            .setDialResponse(DialResponse.newBuilder().setError("e").setConnectID(2).setRandom(1))
            .build();
    assertThat(HexFormat.of().formatHex(rsp.toByteArray())).isEqualTo("0801" + "1a07" + "0a0165" + "1002" + "1801");
    Packet req =
        Packet.newBuilder()
            .setType(PacketType.CLOSE_REQ)
            .setCloseRequest(CloseRequest.newBuilder().setConnectID(4))
            .build();
    assertThat(HexFormat.of().formatHex(req.toByteArray())).isEqualTo("0802" + "2a02" + "0804");
  }

  @Test
  void portageWindowUpdateUsesHighNumbersClearOfUpstream() {
    Packet p =
        Packet.newBuilder()
            .setType(PacketType.PORTAGE_WINDOW_UPDATE)
            .setWindowUpdate(WindowUpdate.newBuilder().setConnectID(3).setBytes(65536))
            .build();
    // type=1 varint 1000 (e8 07); windowUpdate=1000 length-delimited: tag (1000<<3|2)=8002 -> c2 3e;
    // inside: connectID=1 varint 3, bytes=2 varint 65536 (80 80 04).
    assertThat(HexFormat.of().formatHex(p.toByteArray()))
        .isEqualTo("08e807" + "c23e06" + "0803" + "10808004");
    assertThat(PacketType.PORTAGE_WINDOW_UPDATE.getNumber()).isEqualTo(1000);
    assertThat(Packet.getDescriptor().findFieldByName("windowUpdate").getNumber()).isEqualTo(1000);
  }
}
