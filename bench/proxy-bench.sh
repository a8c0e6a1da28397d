#!/usr/bin/env bash
# Side-by-side loopback benchmark of the Portage L4 service proxy and L7 sidecar against HAProxy
# and nginx. One command; everything (configs, logs) lives in a private temp dir, on private ports,
# and every process started here is killed on exit.
#   bench/proxy-bench.sh            # DURATION=5 (seconds per measurement), CONNS=50, THREADS=2,
#                                   # WARMUP=10 (seconds of wrk before each measured wrk run, and of
#                                   # iperf3 before each path's measured iperf3 runs),
#                                   # PORTAGE_WARMUP=30 (the same for Portage's JVMs: the JIT needs
#                                   # tens of seconds of traffic on a loaded 2-core machine),
#                                   # RATES="5000 10000 15000" (requests/s of the L7 fixed-rate runs),
#                                   # PEER_WORKERS=auto (nginx worker_processes, HAProxy nbthread;
#                                   # auto: as they ship, one per core),
#                                   # SIDECAR_IO_THREADS=0 (sidecar --io-threads; 0 = one per core),
#                                   # PARTS="l4 l7", BASE_PORT=27100, PORTAGE=<launcher command>,
#                                   # PORTAGE_JAVA_OPTS (default: Netty leak detection off; also
#                                   # passed when PORTAGE is a raw `java ... -jar portage.jar`), KEEP_TMP=1
# Prints markdown tables with ratios against the reference proxy.
set -euo pipefail

root=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)
DURATION=${DURATION:-5}
CONNS=${CONNS:-50}
THREADS=${THREADS:-2}
WARMUP=${WARMUP:-10}
PORTAGE_WARMUP=${PORTAGE_WARMUP:-30}
PARTS=${PARTS:-l4 l7}
RATES=${RATES:-5000 10000 15000}
PEER_WORKERS=${PEER_WORKERS:-auto}
SIDECAR_IO_THREADS=${SIDECAR_IO_THREADS:-0}
# bin/portage passes these to java; leak detection (on by default in tests) must be off when timing.
export PORTAGE_JAVA_OPTS=${PORTAGE_JAVA_OPTS:--Dio.netty.leakDetection.level=disabled}
BASE=${BASE_PORT:-27100}
tmp=$(mktemp -d /tmp/portage-proxy-bench.XXXXXX)
chmod 755 "$tmp" # nginx workers (another user) serve the static file from here
pids=()

# shellcheck source=processes.sh
source "$root/bench/processes.sh"

# What each part runs, checked before anything starts (otherwise a missing one only shows as a port
# that never opens).
need nginx nginx
need haproxy haproxy
need wrk wrk
need python3 python3
if [[ " $PARTS " == *" l4 "* ]]; then
  need iperf3 iperf3
  # The L4 proxies are nginx `stream` servers: Debian ships that module in its own package.
  [[ -f /usr/lib/nginx/modules/ngx_stream_module.so ]] || nginx -V 2>&1 | grep -q -- '--with-stream[^_]' ||
    { echo "proxy-bench: nginx has no stream module (Debian: apt-get install libnginx-mod-stream)" >&2; exit 1; }
fi
[[ " $PARTS " != *" l7 "* ]] || need h2load nghttp2-client

# Ports.
P_NGINX=$BASE            # nginx static backend (L4 and L7 origin)
P_IPERF=$((BASE + 1))    # iperf3 -s backend
P_HA_TCP=$((BASE + 10)); P_HA_IPERF=$((BASE + 11))
P_NG_TCP=$((BASE + 20)); P_NG_IPERF=$((BASE + 21))
P_PT_TCP=$((BASE + 30)); P_PT_IPERF=$((BASE + 31)); P_PT_ADMIN=$((BASE + 32))
P_HA_HTTP=$((BASE + 40)); P_NG_HTTP=$((BASE + 41))
P_CP_GRPC=$((BASE + 50)); P_CP_ADMIN=$((BASE + 51))
P_SC=$((BASE + 52)); P_SC_ADMIN=$((BASE + 53))
SVC_PORT=8080

head -c 1024 /dev/urandom | base64 -w0 | head -c 1024 >"$tmp/index.html"
chmod 644 "$tmp/index.html"

# nginx: one process holds the static backend, the stream (L4) proxies and the http (L7) proxy.
stream_mod=$(ls /usr/lib/nginx/modules/ngx_stream_module.so 2>/dev/null || true)
cat >"$tmp/nginx.conf" <<NG
${stream_mod:+load_module $stream_mod;}
worker_processes $PEER_WORKERS;
daemon off;
pid $tmp/nginx.pid;
error_log $tmp/nginx-error.log warn;
events { worker_connections 4096; }
stream {
  server { listen 127.0.0.1:$P_NG_TCP; proxy_pass 127.0.0.1:$P_NGINX; }
  server { listen 127.0.0.1:$P_NG_IPERF; proxy_pass 127.0.0.1:$P_IPERF; }
}
http {
  access_log off;
  client_body_temp_path $tmp/nb; proxy_temp_path $tmp/np; fastcgi_temp_path $tmp/nf;
  uwsgi_temp_path $tmp/nu; scgi_temp_path $tmp/ns;
  keepalive_requests 1000000;
  upstream origin { server 127.0.0.1:$P_NGINX; keepalive 64; }
  server { listen 127.0.0.1:$P_NGINX; root $tmp; location / { } }
  server {
    listen 127.0.0.1:$P_NG_HTTP;
    location / { proxy_pass http://origin; proxy_http_version 1.1; proxy_set_header Connection ""; }
  }
}
NG
bg nginx nginx -c "$tmp/nginx.conf" -p "$tmp"
NGINX_PID=${pids[-1]}
bg iperf3 iperf3 -s -B 127.0.0.1 -p "$P_IPERF"

ha_threads="  nbthread $PEER_WORKERS"; [[ $PEER_WORKERS == auto ]] && ha_threads="" # HAProxy default: one per core
cat >"$tmp/haproxy.cfg" <<HA
global
  maxconn 4096
$ha_threads
defaults
  timeout connect 5s
  timeout client 60s
  timeout server 60s
listen tcp_http
  mode tcp
  bind 127.0.0.1:$P_HA_TCP
  server s1 127.0.0.1:$P_NGINX
listen tcp_iperf
  mode tcp
  bind 127.0.0.1:$P_HA_IPERF
  server s1 127.0.0.1:$P_IPERF
listen l7
  mode http
  option http-keep-alive
  http-reuse always
  bind 127.0.0.1:$P_HA_HTTP
  server s1 127.0.0.1:$P_NGINX
HA
bg haproxy haproxy -f "$tmp/haproxy.cfg"
HAPROXY_PID=${pids[-1]}

cat >"$tmp/endpoints.yaml" <<EP
services:
  - name: http
    listen: 127.0.0.1:$P_PT_TCP
    endpoints: ["127.0.0.1:$P_NGINX"]
  - name: iperf
    listen: 127.0.0.1:$P_PT_IPERF
    endpoints: ["127.0.0.1:$P_IPERF"]
EP
bench_service "$tmp/cp" "$SVC_PORT" "$P_NGINX"

# PORTAGE overrides the launcher (e.g. PORTAGE="java -jar /path/portage.jar").
read -r -a portage <<<"${PORTAGE:-$root/bin/portage}"
if [[ $(basename "${portage[0]}") == java ]]; then
  # A raw java command does not go through bin/portage, which is what applies PORTAGE_JAVA_OPTS
  # (and its own JVM defaults): pass them here so both launchers measure the same JVM.
  read -r -a jopts <<<"$PORTAGE_JAVA_OPTS"
  portage=("${portage[0]}" "${jopts[@]}" "${portage[@]:1}")
fi
"${portage[@]}" --version >/dev/null # builds the jar once, before anything is timed
bg service-proxy "${portage[@]}" service-proxy --endpoints-file "$tmp/endpoints.yaml" --admin-port "$P_PT_ADMIN"
SERVICE_PROXY_PID=${pids[-1]} # bin/portage execs java, so this is the JVM
bg control-plane "${portage[@]}" control-plane --source files --dir "$tmp/cp" \
  --grpc-port "$P_CP_GRPC" --admin-port "$P_CP_ADMIN"
wait_port "$P_CP_GRPC"
bg sidecar "${portage[@]}" sidecar --destination-addr "127.0.0.1:$P_CP_GRPC" \
  --outbound-port "$P_SC" --admin-port "$P_SC_ADMIN" --io-threads "$SIDECAR_IO_THREADS"
for p in "$P_NGINX" "$P_IPERF" "$P_HA_TCP" "$P_HA_IPERF" "$P_NG_TCP" "$P_NG_IPERF" "$P_PT_TCP" \
  "$P_PT_IPERF" "$P_HA_HTTP" "$P_NG_HTTP" "$P_SC"; do
  wait_port "$p"
done
HOSTHDR="Host: bench.default.svc.cluster.local:$SVC_PORT"
# The first request starts discovery; on a loaded machine a cold JVM can take longer than the 3 s
# fail-fast timeout to get the first endpoints (503), so try a few times.
served=
for i in $(seq 1 10); do
  if curl -fsS -o /dev/null -H "$HOSTHDR" "http://127.0.0.1:$P_SC/index.html" 2>/dev/null; then served=1; break; fi
  sleep 1
done
[[ -n $served ]] || { echo "sidecar does not serve the bench service; logs in $tmp" >&2; KEEP_TMP=1; exit 1; }

# cputicks PID -> user+system clock ticks of PID and its children (nginx's workers), 0 without PID
cputicks() {
  local t=0 p
  [[ -n ${1:-} ]] || { echo 0; return; }
  for p in "$1" $(pgrep -P "$1" || true); do
    t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0)))
  done
  echo "$t"
}

# iperf PORT STREAMS [PID] -> "GBITS CPU_S_PER_GIB" (receiver side; CPU seconds the proxy process PID
# spent per GiB relayed, "-" without PID)
iperf() {
  local t0 t1 out
  t0=$(cputicks "${3:-}")
  out=$(iperf3 -c 127.0.0.1 -p "$1" -P "$2" -t "$DURATION" -J 2>/dev/null)
  t1=$(cputicks "${3:-}")
  python3 -c '
import json, sys
e = json.loads(sys.argv[1])["end"]["sum_received"]
ticks, hz, pid = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
print("%.2f %s" % (e["bits_per_second"] / 1e9, "%.2f" % (ticks / hz / (e["bytes"] / 2**30)) if pid else "-"))
' "$out" "$((t1 - t0))" "$(getconf CLK_TCK)" "${3:-}"
}

# wrkrun PORT [HEADER] [WARMUP_S] -> "RPS P99MS" (a warm-up run first, not reported)
wrkrun() {
  local port=$1 hdr=${2:-} warm=${3:-$WARMUP} out
  local args=(-t"$THREADS" -c"$CONNS" --latency)
  [[ -n $hdr ]] && args+=(-H "$hdr")
  wrk "${args[@]}" -d"${warm}s" "http://127.0.0.1:$port/index.html" >/dev/null 2>&1 || true
  out=$(wrk "${args[@]}" -d"${DURATION}s" "http://127.0.0.1:$port/index.html")
  echo "$out" >>"$tmp/wrk.log"
  if grep -q "Non-2xx" <<<"$out"; then echo "non-2xx responses on port $port" >&2; fi
  local rps p99
  rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
  p99=$(awk '$1 == "99%" {v=$2; if (v ~ /us$/) {sub(/us/,"",v); v=v/1000} else if (v ~ /ms$/) {sub(/ms/,"",v)} else if (v ~ /s$/) {sub(/s/,"",v); v=v*1000}; print v}' <<<"$out")
  echo "$rps $p99"
}

# h2rate RATE PORT [HEADER] -> "P50MS P99MS P999MS COUNT" of RATE requests/s in total, spread over the same
# CONNS keep-alive HTTP/1.1 connections (h2load --rps: each connection sends at a fixed rate, so the
# latency is measured below saturation, as wrk2 would; wrk above measures it at saturation).
h2rate() {
  local rate=$1 port=$2 hdr=${3:-} log="$tmp/h2load-$2-$1.tsv"
  local args=(--h1 -t"$THREADS" -c"$CONNS" --rps="$((rate / CONNS))" -D "$DURATION" --warm-up-time=2 --log-file="$log")
  # h2load takes the request's authority from the pseudo-header, also in HTTP/1.1 mode.
  [[ -n $hdr ]] && args+=(-H ":authority: ${hdr#Host: }")
  h2load "${args[@]}" "http://127.0.0.1:$port/index.html" >>"$tmp/h2load.out" 2>&1
  python3 - "$log" "$port" <<'PY'
import sys
rows = [l.split("\t") for l in open(sys.argv[1]) if l.strip()]
bad = sum(1 for r in rows if r[1] != "200")
if bad or not rows:
    print(f"{bad} non-200 answers of {len(rows)} on port {sys.argv[2]}", file=sys.stderr)
us = sorted(int(r[2]) for r in rows)
pick = lambda q: us[min(len(us) - 1, int(q * len(us)))] / 1000.0
print("%.2f %.2f %.2f %d" % (pick(0.50), pick(0.99), pick(0.999), len(us)))
PY
}

ratio() { python3 -c "import sys; a,b=float(sys.argv[1]),float(sys.argv[2]); print('%.2f' % (a/b) if b else 'n/a')" "$1" "$2"; }

echo "# proxy-bench $(date -u +%FT%TZ) on $(nproc) cores; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "duration ${DURATION}s per measurement after ${WARMUP}s of warm-up (Portage: ${PORTAGE_WARMUP}s), wrk -t$THREADS -c$CONNS, 1 KiB static file from nginx"
echo "portage JVM options: ${PORTAGE_JAVA_OPTS}; nginx worker_processes and HAProxy nbthread: $PEER_WORKERS; sidecar --io-threads $SIDECAR_IO_THREADS"
if [[ " $PARTS " == *" l4 "* ]]; then
echo
echo "## L4 (TCP)"
echo
echo "| path | iperf3 1 stream Gbit/s | proxy CPU s/GiB, 1 stream | iperf3 4 streams Gbit/s | wrk req/s | wrk p99 ms | req/s vs HAProxy | p99 vs HAProxy |"
echo "|---|---|---|---|---|---|---|---|"
declare -A I1 C1 I4 RPS P99
l4load=$(cut -d' ' -f1-3 /proc/loadavg)
for path in direct haproxy nginx portage; do
  case $path in
    direct) ip=$P_IPERF; hp=$P_NGINX; pid= ;;
    haproxy) ip=$P_HA_IPERF; hp=$P_HA_TCP; pid=$HAPROXY_PID ;;
    nginx) ip=$P_NG_IPERF; hp=$P_NG_TCP; pid=$NGINX_PID ;;
    portage) ip=$P_PT_IPERF; hp=$P_PT_TCP; pid=$SERVICE_PROXY_PID ;;
  esac
  warm=$WARMUP; [[ $path == portage ]] && warm=$PORTAGE_WARMUP
  # Every path's iperf3 runs follow a warm-up of the same path (a cold JVM used to be measured here).
  iperf3 -c 127.0.0.1 -p "$ip" -t "$warm" >/dev/null 2>&1 || true
  read -r I1[$path] C1[$path] < <(iperf "$ip" 1 "$pid")
  read -r I4[$path] _ < <(iperf "$ip" 4 "$pid")
  read -r RPS[$path] P99[$path] < <(wrkrun "$hp" "" "$warm")
done
for path in direct haproxy nginx portage; do
  echo "| $path | ${I1[$path]} ($(ratio "${I1[$path]}" "${I1[haproxy]}")×) | ${C1[$path]} | ${I4[$path]} ($(ratio "${I4[$path]}" "${I4[haproxy]}")×) | ${RPS[$path]} | ${P99[$path]} | $(ratio "${RPS[$path]}" "${RPS[haproxy]}") | $(ratio "${P99[$path]}" "${P99[haproxy]}") |"
done
echo
echo "load average before L4: $l4load; nginx's CPU includes its idle static-file backend"
fi
if [[ " $PARTS " == *" l7 "* ]]; then
echo
echo "## L7 (HTTP/1.1 keep-alive)"
echo
echo "| proxy | wrk req/s | wrk p99 ms | req/s vs nginx | p99 vs nginx |"
echo "|---|---|---|---|---|"
declare -A LR LP
l7load=$(cut -d' ' -f1-3 /proc/loadavg)
read -r LR[nginx] LP[nginx] < <(wrkrun "$P_NG_HTTP")
read -r LR[haproxy] LP[haproxy] < <(wrkrun "$P_HA_HTTP")
read -r LR[sidecar] LP[sidecar] < <(wrkrun "$P_SC" "$HOSTHDR" "$PORTAGE_WARMUP")
for p in nginx haproxy sidecar; do
  echo "| $p | ${LR[$p]} | ${LP[$p]} | $(ratio "${LR[$p]}" "${LR[nginx]}") | $(ratio "${LP[$p]}" "${LP[nginx]}") |"
done
echo
echo "load average during L7: $l7load"
echo
echo "### L7 at fixed rates (h2load --h1 --rps over $CONNS connections, ${DURATION}s each after 2 s of warm-up)"
echo
echo "| rate req/s | proxy | p50 ms | p99 ms | p99.9 ms | requests | p99 vs nginx | p99.9 vs nginx |"
echo "|---|---|---|---|---|---|---|---|"
fload=$(cut -d' ' -f1-3 /proc/loadavg)
for rate in $RATES; do
  declare -A F50 F99 F999 FN
  read -r F50[nginx] F99[nginx] F999[nginx] FN[nginx] < <(h2rate "$rate" "$P_NG_HTTP")
  read -r F50[haproxy] F99[haproxy] F999[haproxy] FN[haproxy] < <(h2rate "$rate" "$P_HA_HTTP")
  read -r F50[sidecar] F99[sidecar] F999[sidecar] FN[sidecar] < <(h2rate "$rate" "$P_SC" "$HOSTHDR")
  for p in nginx haproxy sidecar; do
    echo "| $rate | $p | ${F50[$p]} | ${F99[$p]} | ${F999[$p]} | ${FN[$p]} | $(ratio "${F99[$p]}" "${F99[nginx]}") | $(ratio "${F999[$p]}" "${F999[nginx]}") |"
  done
done
echo
echo "load average before the fixed-rate runs: $fload"
fi
echo
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
