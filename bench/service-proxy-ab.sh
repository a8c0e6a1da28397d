#!/usr/bin/env bash
# A/B of `portage service-proxy` builds (or JVM options) in its userspace relay: one nginx origin
# (1 KiB file, `worker_processes auto`) and one iperf3 server behind two Services of an endpoints
# file. Each run starts a fresh service proxy from one jar (entries of JARS in turns, the order
# reversed every other round), gives it WARM s of `wrk -t2 -c50`, then measures DURATION s of it:
# requests/s, p99, the proxy's CPU per request (utime + stime from /proc), the bytes its JVM
# allocated per request (JFR jdk.ThreadAllocationStatistics every 100 ms over the measured window);
# then 10 s of `iperf3 -P4` through it, and its resident memory after that.
#   JARS="base.jar new.jar" bench/service-proxy-ab.sh      # ROUNDS=3 DURATION=10 WARM=30
#   EXTRA_<i>: JVM options of the i-th jar (0-based), e.g. EXTRA_1="-Dportage.transport=io_uring"
#   BULK_FIRST=1: 10 s of iperf3 -P4 through each fresh proxy before its wrk warm-up
# Each proxy starts through bin/portage (PORTAGE_JAR=<the entry>), so it gets the JDK and JVM options
# a user's gets.
# Run it under the machine-wide benchmark lock: flock /tmp/portage-bench.lock bench/service-proxy-ab.sh
set -euo pipefail
root=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)
read -r -a jars <<<"${JARS:?JARS: the portage.jar builds to compare, space-separated}"
ROUNDS=${ROUNDS:-3}; DURATION=${DURATION:-10}; WARM=${WARM:-30}
tmp=$(mktemp -d /tmp/portage-service-proxy-ab.XXXXXX); chmod 755 "$tmp"; pids=()
source "$root/bench/processes.sh"
need nginx nginx
need wrk wrk
need iperf3 iperf3
need python3 python3
for jar in "${jars[@]}"; do [[ -f $jar ]] || { echo "service-proxy-ab.sh: $jar is not a file" >&2; exit 1; }; done

head -c 1024 /dev/urandom | base64 -w0 | head -c 1024 >"$tmp/index.html"; chmod 644 "$tmp/index.html"
cat >"$tmp/nginx.conf" <<NG
worker_processes auto; daemon off; pid $tmp/nginx.pid; error_log $tmp/nginx-error.log warn;
events { worker_connections 4096; }
http { access_log off; client_body_temp_path $tmp/nb; proxy_temp_path $tmp/np; fastcgi_temp_path $tmp/nf;
  uwsgi_temp_path $tmp/nu; scgi_temp_path $tmp/ns; keepalive_requests 1000000;
  server { listen 127.0.0.1:27400; root $tmp; location / { } } }
NG
cat >"$tmp/endpoints.yaml" <<EP
services:
  - name: http
    listen: 127.0.0.1:27410
    endpoints: ["127.0.0.1:27400"]
  - name: bulk
    listen: 127.0.0.1:27411
    endpoints: ["127.0.0.1:27401"]
EP
alloc_jfc "$tmp/alloc.jfc"
bg nginx nginx -c "$tmp/nginx.conf" -p "$tmp"
bg iperf3 iperf3 -s -p 27401
wait_port 27400; wait_port 27401
ticks() { awk '{print $14+$15}' /proc/"$1"/stat; }
hz=$(getconf CLK_TCK)

run() { # run INDEX ROUND: one fresh service proxy from the INDEX-th jar, measured once
  local i=$1 r=$2 extra_var=EXTRA_$1
  # bin/portage (its JDK, its JVM options) on the entry's jar; it execs java, so $! is the JVM.
  PORTAGE_JAR="${jars[$i]}" PORTAGE_JAVA_OPTS="-Dio.netty.leakDetection.level=disabled ${!extra_var:-}" \
    "$root/bin/portage" service-proxy --endpoints-file "$tmp/endpoints.yaml" --admin-port 27412 \
    >"$tmp/sp-$i-$r.log" 2>&1 &
  local sp=$!; pids+=($sp)
  wait_port 27410
  local jdk_bin
  jdk_bin=$(dirname "$(readlink -f /proc/"$sp"/exe)")
  [[ -x $jdk_bin/jcmd && -x $jdk_bin/jfr ]] || { echo "service-proxy-ab.sh: $jdk_bin has no jcmd/jfr (a full JDK 21+ is needed)" >&2; exit 1; }
  # The bulk listener by `ss`: a probe connection through it would reach iperf3's server as a test
  # that never starts, and the next client's test fails.
  for _ in $(seq 1 100); do [[ -n $(ss -ltnH 'sport = :27411') ]] && break; sleep 0.1; done
  # proxy-bench.sh's order: bulk streams first, so the short exchanges meet buffers bulk reads grew
  [[ -z ${BULK_FIRST:-} ]] || iperf3 -c 127.0.0.1 -p 27411 -P4 -t10 >/dev/null
  wrk -t2 -c50 -d"${WARM}"s http://127.0.0.1:27410/index.html >/dev/null
  "$jdk_bin/jcmd" "$sp" JFR.start name=ab settings="$tmp/alloc.jfc" filename="$tmp/ab.jfr" >/dev/null
  local t0 t1 out
  t0=$(ticks "$sp")
  out=$(wrk -t2 -c50 -d"${DURATION}"s --latency http://127.0.0.1:27410/index.html)
  t1=$(ticks "$sp")
  "$jdk_bin/jcmd" "$sp" JFR.stop name=ab >/dev/null
  local n rps p99 bytes gbit rss
  n=$(awk '/requests in/ {print $1}' <<<"$out"); rps=$(awk '/Requests\/sec/ {printf "%.0f", $2}' <<<"$out")
  # wrk prints 850.00us, 6.12ms or 1.02s: in ms
  p99=$(awk '$1=="99%" {v=$2; f=1; if (v ~ /us$/) f=0.001; else if (v ~ /ms$/) f=1; else if (v ~ /s$/) f=1000;
    sub(/[a-z]+$/, "", v); printf "%.2f", v * f}' <<<"$out")
  # Per thread, allocated bytes at the last sample minus the first: the measured window.
  bytes=$("$jdk_bin/jfr" print --json --events jdk.ThreadAllocationStatistics "$tmp/ab.jfr" | python3 -c '
import collections, json, sys
by = collections.defaultdict(list)
for e in json.load(sys.stdin)["recording"]["events"]:
    v = e["values"]
    by[v["thread"]["javaThreadId"] if v.get("thread") else 0].append(v["allocated"])
print("%.0f" % (sum(max(a) - min(a) for a in by.values()) / int(sys.argv[1])))' "$n")
  gbit=$(iperf3 -c 127.0.0.1 -p 27411 -P4 -t10 -J | python3 -c \
    'import json, sys; print("%.1f" % (json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"] / 1e9))')
  rss=$(awk '/VmRSS/ {printf "%.0f", $2 / 1024}' /proc/"$sp"/status)
  local cpu
  cpu=$(awk -v t="$((t1 - t0))" -v hz="$hz" -v n="$n" 'BEGIN {printf "%.1f", t / hz * 1e6 / n}')
  echo "round $r jar $i: rps $rps p99 $p99 cpu_us/req $cpu bytes/req $bytes iperf3_P4_gbit $gbit rss_mib $rss load $(cut -d' ' -f1 /proc/loadavg)"
  echo "$i $rps $cpu $bytes $gbit $rss $p99" >>"$tmp/runs"
  kill "$sp"; wait "$sp" 2>/dev/null || true
}

echo "# $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg); p99 in ms"
for r in $(seq 1 "$ROUNDS"); do
  order=("${!jars[@]}")
  (( r % 2 )) || order=($(printf '%s\n' "${order[@]}" | tac))
  for i in "${order[@]}"; do run "$i" "$r"; done
done
# Medians over the rounds; interleaved runs share the box's load, so compare jars, not rounds.
[[ -s $tmp/runs ]] || exit 0
python3 - "$tmp/runs" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
for i in sorted({r[0] for r in rows}, key=int):
    m = [statistics.median(float(r[k]) for r in rows if r[0] == i) for k in range(1, 7)]
    print("jar %s median: rps %.0f cpu_us/req %.1f bytes/req %.0f iperf3_P4_gbit %.1f rss_mib %.0f p99 %.2f" % (i, *m))
PY
