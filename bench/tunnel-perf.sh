#!/usr/bin/env bash
# CPU profile of the tunnel relays (server and agent JVMs; ROUTE=connect, the default, ROUTE=connect-tls: HTTP
# CONNECT with TLS on both hops, ROUTE=grpc, or ROUTE=grpcgo: the gRPC frontend with the grpc-go client) during a warm single-stream download
# (see docs/benchmarks-tunnel.md, "Where the CPU goes"). Runs bench/tunnel-bench.sh on the connect route
# with a 4 GiB measured stream, waits until the harness reports a JIT settle round under 0.25 CPU-s (or the last one),
# then `perf record -g` of both relays for SECONDS_TO_RECORD (default 5). Java frames come from the perf maps the
# relays write at exit (-XX:+DumpPerfMapAtExit). Run it under the bench lock:
#   flock /tmp/portage-bench.lock bench/tunnel-perf.sh [out-prefix]     # default /tmp/tunnel-perf
#   perf report -i /tmp/tunnel-perf.data --no-children --sort pid,dso,sym
# Extra child JVM options (e.g. -Dportage.transport=epoll) go in TUNNEL_BENCH_CHILD_OPTS.
set -euo pipefail
root=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)
out=${1:-/tmp/tunnel-perf}
route=${ROUTE:-connect}
case $route in
  connect) server_match="BenchChild server http-connect$"; agent_match="BenchChild agent [0-9]+$" ;;
  connect-tls) server_match="BenchChild server http-connect.* tls="; agent_match="BenchChild agent [0-9]+ tls=" ;;
  grpc|grpcgo) server_match="BenchChild server grpc"; agent_match="BenchChild agent [0-9]+$" ;;
  *) echo "tunnel-perf: ROUTE must be connect, connect-tls, grpc or grpcgo" >&2; exit 64 ;;
esac
command -v perf >/dev/null || { echo "tunnel-perf: perf not found (Debian: apt-get install linux-perf)" >&2; exit 1; }
TUNNEL_BENCH_CHILD_OPTS="-XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit ${TUNNEL_BENCH_CHILD_OPTS:-}" \
  timeout 600 "$root/bench/tunnel-bench.sh" --idle 0 --dials 50 --get-dials 0 --routes "$route" --bytes 4096 \
  2>"$out.err" >"$out.out" &
bench=$!
for _ in $(seq 3000); do
  # settled, or out of settle rounds (the measured stream starts either way; JIT threads show apart in perf)
  grep -qE "settle round .*for 0\.(0|1|2[0-4])|JIT not settled" "$out.err" 2>/dev/null && break
  kill -0 "$bench" 2>/dev/null || { echo "tunnel-perf: benchmark ended early, see $out.err" >&2; exit 1; }
  sleep 0.2
done
sleep 1
server=$(pgrep -f "$server_match")
# the connect route's agent starts first, the gRPC route's last (the connect-tls one in between)
case $route in
  grpc|grpcgo) agent=$(pgrep -f "$agent_match" | sort -n | tail -1) ;;
  *) agent=$(pgrep -f "$agent_match" | sort -n | head -1) ;;
esac
echo "tunnel-perf: recording server $server, agent $agent" >&2
perf record -g -F 997 -o "$out.data" -p "$server,$agent" -- sleep "${SECONDS_TO_RECORD:-5}" >&2
wait "$bench"
cat "$out.out"
