package dev.portage.tunnel.server;

import com.google.protobuf.ByteString;
import dev.portage.api.konnectivity.CloseDial;
import dev.portage.api.konnectivity.CloseRequest;
import dev.portage.api.konnectivity.CloseResponse;
import dev.portage.api.konnectivity.Data;
import dev.portage.api.konnectivity.DialRequest;
import dev.portage.api.konnectivity.DialResponse;
import dev.portage.api.konnectivity.Drain;
import dev.portage.api.konnectivity.Packet;
import dev.portage.api.konnectivity.PacketType;

/** Packet builders for tests. */
final class Packets {
  private Packets() {}

  static Packet dialReq(String address, long random) {
    return Packet.newBuilder().setType(PacketType.DIAL_REQ)
        .setDialRequest(DialRequest.newBuilder().setProtocol("tcp").setAddress(address).setRandom(random))
        .build();
  }

  static Packet dialRsp(long random, long connectID) {
    return Packet.newBuilder().setType(PacketType.DIAL_RSP)
        .setDialResponse(DialResponse.newBuilder().setRandom(random).setConnectID(connectID))
        .build();
  }

  static Packet dialRspError(long random, String error) {
    return Packet.newBuilder().setType(PacketType.DIAL_RSP)
        .setDialResponse(DialResponse.newBuilder().setRandom(random).setError(error))
        .build();
  }

  static Packet data(long connectID, byte[] bytes) {
    return data(connectID, ByteString.copyFrom(bytes));
  }

  static Packet data(long connectID, ByteString bytes) {
    return Packet.newBuilder().setType(PacketType.DATA)
        .setData(Data.newBuilder().setConnectID(connectID).setData(bytes))
        .build();
  }

  static Packet closeReq(long connectID) {
    return Packet.newBuilder().setType(PacketType.CLOSE_REQ)
        .setCloseRequest(CloseRequest.newBuilder().setConnectID(connectID))
        .build();
  }

  static Packet closeRsp(long connectID) {
    return Packet.newBuilder().setType(PacketType.CLOSE_RSP)
        .setCloseResponse(CloseResponse.newBuilder().setConnectID(connectID))
        .build();
  }

  static Packet dialCls(long random) {
    return Packet.newBuilder().setType(PacketType.DIAL_CLS)
        .setCloseDial(CloseDial.newBuilder().setRandom(random))
        .build();
  }

  static Packet drain() {
    return Packet.newBuilder().setType(PacketType.DRAIN).setDrain(Drain.getDefaultInstance()).build();
  }
}
