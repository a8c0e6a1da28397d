// Turns recorded Kubernetes JSON objects (a Pod, a PodList) into the protobuf bodies
// kube-apiserver sends a client-go client (k8s\0 + runtime.Unknown), with the hub's own codec.
// Run by bench/hub-bench.sh in Java's source-file mode, with the portage jar on the class path:
//   java -cp cli/target/portage.jar bench/hub/ProtobufFixture.java in.json out.pb [in.json out.pb ...]
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.portage.hub.codec.KubeCodec;
import dev.portage.hub.codec.KubeTypes;
import java.nio.file.Files;
import java.nio.file.Path;

public final class ProtobufFixture {
  public static void main(String[] args) throws Exception {
    if (args.length == 0 || args.length % 2 != 0) {
      throw new IllegalArgumentException("usage: ProtobufFixture in.json out.pb [in.json out.pb ...]");
    }
    ObjectMapper json = new ObjectMapper();
    KubeCodec codec = new KubeCodec(json, KubeTypes.standard());
    for (int i = 0; i < args.length; i += 2) {
      byte[] body = codec.toProtobuf(Files.readAllBytes(Path.of(args[i])));
      // The object must read back as the same JSON it came from (no field lost in the mapping).
      if (!json.readTree(codec.toJson(body)).equals(json.readTree(Files.readAllBytes(Path.of(args[i]))))) {
        throw new IllegalStateException(args[i] + ": the protobuf body does not read back as the same object");
      }
      Files.write(Path.of(args[i + 1]), body);
    }
  }
}
