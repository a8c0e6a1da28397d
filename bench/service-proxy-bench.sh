#!/usr/bin/env bash
# The service proxy benchmark on real kernels (root): builds a node network namespace with a bridge
# of pod namespaces (a server pod running iperf3 and a TCP server, a client pod), then runs
# dev.portage.bench.serviceproxy.ServiceProxyBench inside the node namespace. It drives
# `portage service-proxy` (the CLI jar, its own process) against a mock Kubernetes API server and
# measures, in one run: iperf3 direct / through a ClusterIP (nftables, userspace) / through HAProxy;
# connect latency with 10 and SERVICES Services; programming SERVICES x 10 endpoints; one new
# Service reachable; the proxy's heap. Everything is removed on exit, whatever happens.
#   bench/service-proxy-bench.sh      # SERVICES=10000 DURATION=10 WARMUP=5 PARTS="dataplane scale"
#                                     # RAW=/tmp/service-proxy-bench-<UTC date>.csv (every figure),
#                                     # PLOTS=docs/bench-results (service-proxy-*.csv for the plots)
# Run it under the shared bench lock: flock /tmp/portage-bench.lock bench/service-proxy-bench.sh
set -euo pipefail
root=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)
SERVICES=${SERVICES:-10000}
DURATION=${DURATION:-10}
WARMUP=${WARMUP:-5}
PARTS=${PARTS:-dataplane scale}
RAW=${RAW:-/tmp/service-proxy-bench-$(date -u +%Y%m%d-%H%M).csv}
PLOTS=${PLOTS:-$root/docs/bench-results}
[[ $(id -u) == 0 ]] || { echo "service-proxy-bench: needs root (network namespaces, nftables)" >&2; exit 1; }
for tool in nft conntrack iperf3 python3 haproxy curl ip; do
  command -v $tool >/dev/null || { echo "service-proxy-bench: $tool is missing (apt-get install nftables conntrack iperf3 python3 haproxy curl iproute2)" >&2; exit 1; }
done

jar=$root/cli/target/portage.jar
bench_jar=$root/bench/target/benchmarks.jar
if [[ ! -f $jar || ! -f $bench_jar ]]; then
  (cd "$root" && mvn -B -q -ntp -DskipTests -pl cli,bench -am package)
fi
java=$(for j in /usr/lib/jvm/temurin-25-jdk-amd64/bin/java /usr/lib/jvm/*/bin/java; do [[ -x $j ]] && "$j" -version 2>&1 | grep -qE "version \"(2[1-9]|[3-9][0-9])" && { echo "$j"; break; }; done)
[[ -n $java ]] || { echo "service-proxy-bench: no JDK 21+ in /usr/lib/jvm" >&2; exit 1; }

p=ptgb$$
node=$p-node; client=$p-client; server=$p-server
cleanup() {
  for ns in $server $client; do
    ip netns pids $ns 2>/dev/null | xargs -r kill -9 2>/dev/null || true
    ip netns del $ns 2>/dev/null || true
  done
  ip netns pids $node 2>/dev/null | xargs -r kill 2>/dev/null || true
  sleep 1
  ip netns pids $node 2>/dev/null | xargs -r kill -9 2>/dev/null || true
  ip netns del $node 2>/dev/null || true
  rm -f "${logback:-}"
}
trap cleanup EXIT

ip netns add $node
ip netns exec $node sh -c "ip link set lo up && ip link add br0 type bridge && ip addr add 10.244.0.1/24 dev br0 \
  && ip link set br0 up && ip link add up0 type veth peer name up1 && ip addr add 192.168.100.2/24 dev up0 \
  && ip link set up1 up && ip link set up0 up && ip route add default via 192.168.100.1 dev up0 \
  && ip neigh add 192.168.100.1 lladdr 02:00:00:00:00:01 dev up0 nud permanent \
  && sysctl -qw net.ipv4.ip_forward=1"
pod() { # name ip
  ip netns add $1
  ip link add v${2##*.} netns $node type veth peer name eth0 netns $1
  ip netns exec $node ip link set v${2##*.} master br0 up
  ip netns exec $1 sh -c "ip link set lo up && ip addr add $2/24 dev eth0 && ip link set eth0 up && ip route add default via 10.244.0.1"
}
pod $server 10.244.0.11
pod $client 10.244.0.99
ip netns exec $server iperf3 -s -D
# Accepts and closes at once: the connect-latency samples must not wait on a slow accept loop.
ip netns exec $server python3 -c '
import socket
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 8080))
s.listen(4096)
while True:
    c, _ = s.accept()
    c.close()
' &

logback=$(mktemp /tmp/service-proxy-bench-logback.XXXXXX.xml)
cat >"$logback" <<'XML'
<configuration><appender name="E" class="ch.qos.logback.core.ConsoleAppender"><target>System.err</target>
<encoder><pattern>%d{HH:mm:ss.SSS} %-5level %logger{20} %msg%n</pattern></encoder></appender>
<root level="WARN"><appender-ref ref="E"/></root></configuration>
XML
echo "load before: $(uptime)"
note="$(date -u '+%Y-%m-%d %H:%M') UTC, load $(cut -d' ' -f1 /proc/loadavg)"
ip netns exec $node "$java" --enable-native-access=ALL-UNNAMED -Dio.netty.leakDetection.level=disabled \
  -Dlogback.configurationFile="$logback" -Djava.util.logging.config.file=/dev/null \
  -cp "$bench_jar" dev.portage.bench.serviceproxy.ServiceProxyBench \
  "$jar" "$client" "$SERVICES" "$DURATION" "$WARMUP" "$RAW" "$PARTS" "$PLOTS" "$note"
echo "load after: $(uptime)"
echo "every figure: $RAW; plot inputs: $PLOTS/service-proxy-*.csv"
