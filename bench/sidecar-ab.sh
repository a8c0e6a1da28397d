#!/usr/bin/env bash
# A/B of Portage sidecar builds (or JVM options) side by side: one nginx origin (1 KiB file), one
# control plane, one sidecar per entry of JARS, each warmed with wrk for WARM s, then ROUNDS rounds
# of `wrk -t2 -c50 --latency -d DURATION` per sidecar, interleaved. Prints req/s, p50, p99, the
# sidecar's CPU time per request (utime+stime from /proc over the run / requests), bytes allocated
# per request (from its GC log, whole life / requests served) and its young GC pauses.
#   JAVA=/path/to/jdk25/bin/java JARS="base.jar new.jar" bench/sidecar-ab.sh
#   EXTRA_<i>: JVM options of the i-th sidecar (0-based), e.g. EXTRA_1="-Dio.netty.eventLoopThreads=1"
# Run it under the machine-wide benchmark lock: flock /tmp/portage-bench.lock bench/sidecar-ab.sh
set -euo pipefail
J=${JAVA:-java}
root=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)
read -r -a jars <<<"${JARS:?JARS: the sidecar jars to compare, space-separated}"
ROUNDS=${ROUNDS:-3}; DURATION=${DURATION:-5}; WARM=${WARM:-20}
tmp=$(mktemp -d /tmp/portage-sidecar-ab.XXXXXX); chmod 755 "$tmp"; pids=()
source "$root/bench/processes.sh"
head -c 1024 /dev/urandom | base64 -w0 | head -c 1024 >"$tmp/index.html"; chmod 644 "$tmp/index.html"
cat >"$tmp/nginx.conf" <<NG
worker_processes 1; daemon off; pid $tmp/nginx.pid; error_log $tmp/nginx-error.log warn;
events { worker_connections 4096; }
http { access_log off; client_body_temp_path $tmp/nb; proxy_temp_path $tmp/np; fastcgi_temp_path $tmp/nf;
  uwsgi_temp_path $tmp/nu; scgi_temp_path $tmp/ns; keepalive_requests 1000000;
  server { listen 127.0.0.1:27200; root $tmp; location / { } } }
NG
bg nginx nginx -c "$tmp/nginx.conf" -p "$tmp"
bench_service "$tmp/cp" 8080 27200
bg cp "$J" -jar "${jars[0]}" control-plane --source files --dir "$tmp/cp" --grpc-port 27201 --admin-port 27202
wait_port 27201
i=0; spids=()
for jar in "${jars[@]}"; do
  port=$((27210 + 2*i)); extra_var=EXTRA_$i; extra=${!extra_var:-}
  "$J" --enable-native-access=ALL-UNNAMED -Dio.netty.leakDetection.level=disabled -Xlog:gc*:file=$tmp/gc-$i.log:uptime $extra -jar "$jar" sidecar --destination-addr 127.0.0.1:27201 --outbound-port $port --admin-port $((port+1)) >"$tmp/sc-$i.log" 2>&1 &
  pids+=($!); spids+=($!)
  i=$((i+1))
done
HOST="Host: bench.default.svc.cluster.local:8080"
for i in "${!jars[@]}"; do wait_port $((27210+2*i)); for k in $(seq 1 10); do curl -fsS -o /dev/null -H "$HOST" http://127.0.0.1:$((27210+2*i))/index.html && break; sleep 1; done; done
ticks() { awk '{print $14+$15}' /proc/$1/stat; }
for i in "${!jars[@]}"; do wrk -t2 -c50 -d${WARM}s -H "$HOST" http://127.0.0.1:$((27210+2*i))/index.html >/dev/null; done
echo "# $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq 1 $ROUNDS); do
  for i in "${!jars[@]}"; do
    port=$((27210+2*i)); t0=$(ticks ${spids[$i]})
    out=$(wrk -t2 -c50 -d${DURATION}s --latency -H "$HOST" http://127.0.0.1:$port/index.html)
    t1=$(ticks ${spids[$i]})
    rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out"); n=$(awk '/requests in/ {print $1}' <<<"$out")
    p50=$(awk '$1=="50%"{print $2}' <<<"$out"); p99=$(awk '$1=="99%"{print $2}' <<<"$out")
    cpu=$(awk -v t="$((t1-t0))" -v n="$n" 'BEGIN {printf "%.2f", (n > 0 ? t * 10000 / n : 0)}')
    echo "round $r jar $i: rps $rps p50 $p50 p99 $p99 cpu_us/req $cpu load $(cut -d' ' -f1 /proc/loadavg)"
    echo "$i $rps $cpu" >>"$tmp/rounds"
  done
done
# Means over the rounds, and each jar against the first (interleaved rounds share the box's load).
awk '{rps[$1]+=$2; cpu[$1]+=$3; n[$1]++} END {for (i in n) printf "jar %d mean: rps %.0f (%.3fx jar 0) cpu_us/req %.2f (%.3fx jar 0)\n", i, rps[i]/n[i], (rps[i]/n[i])/(rps[0]/n[0]), cpu[i]/n[i], (cpu[i]/n[i])/(cpu[0]/n[0])}' "$tmp/rounds" | sort
for i in "${!jars[@]}"; do
  reqs=$(curl -fsS http://127.0.0.1:$((27211+2*i))/metrics | awk '/^portage_sidecar_route_requests_total/ {s+=$2} END {printf "%d", s}')
  alloc=$(grep -o 'Pause Young.* [0-9]*M->[0-9]*M' $tmp/gc-$i.log | grep -o '[0-9]*M->[0-9]*M' | awk -F'M->|M' 'NR>1 {s+=$1-prev} {prev=$2} END {printf "%d", s*1048576}')
  echo "jar $i requests $reqs allocated ~$((alloc/1048576)) MiB = $((alloc/(reqs>0?reqs:1))) bytes/request (young GCs from the 2nd on)"
  echo "jar $i GC pauses: $(grep -c 'Pause Young' $tmp/gc-$i.log) young; longest ms: $(grep -o 'Pause Young.* [0-9.]*ms' $tmp/gc-$i.log | grep -o '[0-9.]*ms$' | sort -n | tail -3 | tr '\n' ' ')"
done
[[ -n ${KEEP_TMP:-} ]] && echo "logs: $tmp"
