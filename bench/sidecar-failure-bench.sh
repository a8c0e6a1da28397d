#!/usr/bin/env bash
# The sidecar under failure, with nginx (as Debian ships it: worker_processes auto) as the peer in the
# same run. Ten endpoints behind one service, nine healthy nginx servers and one that
#   refused  refuses connections (its pod is gone, the EndpointSlice still lists it as ready),
#   503      answers every request with 503,
#   kill     is healthy and is killed (SIGKILL, master and workers) half-way through the run.
# Each (scenario, proxy) gets a fresh proxy process: `portage sidecar` with --balancer p2c-ewma and
# round-robin, and nginx `proxy_pass` to an upstream of the same ten endpoints. Every proxy is
# warmed up on a second service of ten healthy endpoints, measured there (the healthy baseline),
# then measured on the failing service from a cold start of that service (its first request starts
# discovery), so the table shows the whole failure, then once more on the failing service when it has
# settled (the "settled" columns: the p99 to hold against the healthy one).
#   bench/sidecar-failure-bench.sh      # DURATION=10 CONNS=16 THREADS=2 WARMUP=20 (seconds of wrk
#                                       # on the healthy service first), SCENARIOS="refused 503 kill",
#                                       # PROXIES="p2c-ewma round-robin nginx", ACCRUAL=consecutive
#                                       # (sidecar --failure-accrual in the 503 scenario; empty to
#                                       # see it without), BASE_PORT=27300, PORTAGE=<launcher command>
# Run it under the machine-wide benchmark lock: flock /tmp/portage-bench.lock bench/sidecar-failure-bench.sh
# Prints one Markdown table; success = 2xx responses / (responses + socket errors).
set -euo pipefail

root=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)
DURATION=${DURATION:-10}
CONNS=${CONNS:-16}
THREADS=${THREADS:-2}
WARMUP=${WARMUP:-20}
SCENARIOS=${SCENARIOS:-refused 503 kill}
PROXIES=${PROXIES:-p2c-ewma round-robin nginx}
ACCRUAL=${ACCRUAL-consecutive}
export PORTAGE_JAVA_OPTS=${PORTAGE_JAVA_OPTS:--Dio.netty.leakDetection.level=disabled}
BASE=${BASE_PORT:-27300}
tmp=$(mktemp -d /tmp/portage-failure-bench.XXXXXX)
chmod 755 "$tmp"
pids=()
# shellcheck source=processes.sh
source "$root/bench/processes.sh"

P_B=$BASE                   # healthy backends: $P_B+1 .. $P_B+10
P_X=$((BASE + 20))          # the failing endpoint
P_NG=$((BASE + 30))         # nginx proxy: healthy service on P_NG, failing service on P_NG+1
P_CP=$((BASE + 40)); P_CP_ADMIN=$((BASE + 41))
P_SC=$((BASE + 42)); P_SC_ADMIN=$((BASE + 43))
SVC_PORT=8080

head -c 1024 /dev/urandom | base64 -w0 | head -c 1024 >"$tmp/index.html"
chmod 644 "$tmp/index.html"

common_http() { # the http{} lines every nginx here shares
  echo "access_log off; client_body_temp_path $1/nb; proxy_temp_path $1/np; fastcgi_temp_path $1/nf;"
  echo "uwsgi_temp_path $1/nu; scgi_temp_path $1/ns; keepalive_requests 1000000;"
}

# Nine + one healthy backends in one nginx (ports P_B+1..P_B+10).
mkdir -p "$tmp/backends"
{
  echo "worker_processes auto; daemon off; pid $tmp/backends/nginx.pid; error_log $tmp/backends/error.log warn;"
  echo "events { worker_connections 4096; }"
  echo "http { $(common_http "$tmp/backends")"
  for i in $(seq 1 10); do echo "  server { listen 127.0.0.1:$((P_B + i)); root $tmp; location / { } }"; done
  echo "}"
} >"$tmp/backends/nginx.conf"
bg backends nginx -c "$tmp/backends/nginx.conf" -p "$tmp/backends"

# start_x MODE: the failing endpoint's own nginx (normal or 503); "refused" starts nothing.
X_PID=
start_x() {
  stop_x
  [[ $1 == refused ]] && return 0
  local loc="root $tmp; location / { }"
  [[ $1 == 503 ]] && loc="location / { return 503; }"
  mkdir -p "$tmp/x"
  cat >"$tmp/x/nginx.conf" <<NG
worker_processes auto; daemon off; pid $tmp/x/nginx.pid; error_log $tmp/x/error.log warn;
events { worker_connections 4096; }
http { $(common_http "$tmp/x") server { listen 127.0.0.1:$P_X; $loc } }
NG
  bg x nginx -c "$tmp/x/nginx.conf" -p "$tmp/x"
  X_PID=${pids[-1]}
  wait_port "$P_X"
}
stop_x() { # SIGKILL to the master and its workers at once: what a node sees when a pod dies
  [[ -n $X_PID ]] || return 0
  kill -9 "$X_PID" $(pgrep -P "$X_PID" || true) 2>/dev/null || true
  X_PID=
}

# The control plane: service "healthy" (P_B+1..10) and "failing" (P_B+1..9 and P_X).
mkdir -p "$tmp/cp"
slice() { # slice SERVICE NAME PORT
  cat <<EP
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: $2, namespace: default, labels: {kubernetes.io/service-name: $1}}
addressType: IPv4
endpoints:
  - addresses: ["127.0.0.1"]
    conditions: {ready: true}
ports:
  - {name: http, protocol: TCP, port: $3}
EP
}
{
  for svc in healthy failing; do
    cat <<SVC
---
apiVersion: v1
kind: Service
metadata: {name: $svc, namespace: default}
spec:
  ports:
    - {name: http, protocol: TCP, port: $SVC_PORT}
SVC
  done
  for i in $(seq 1 10); do slice healthy "healthy-$i" $((P_B + i)); done
  for i in $(seq 1 9); do slice failing "failing-$i" $((P_B + i)); done
  slice failing failing-x "$P_X"
} >"$tmp/cp/services.yaml"

read -r -a portage <<<"${PORTAGE:-$root/bin/portage}"
if [[ $(basename "${portage[0]}") == java ]]; then
  read -r -a jopts <<<"$PORTAGE_JAVA_OPTS"
  portage=("${portage[0]}" "${jopts[@]}" "${portage[@]:1}")
fi
"${portage[@]}" --version >/dev/null # builds the jar once, before anything is timed
bg control-plane "${portage[@]}" control-plane --source files --dir "$tmp/cp" \
  --grpc-bind-address 127.0.0.1 --grpc-port "$P_CP" --admin-port "$P_CP_ADMIN"
wait_port "$P_CP"
for i in $(seq 1 10); do wait_port $((P_B + i)); done

# The nginx peer: upstream blocks at nginx's defaults (round robin, max_fails=1 fail_timeout=10s,
# proxy_next_upstream error timeout), keep-alive to the upstreams as in proxy-bench.sh.
write_nginx_proxy() {
  mkdir -p "$tmp/ngp"
  {
    echo "worker_processes auto; daemon off; pid $tmp/ngp/nginx.pid; error_log $tmp/ngp/error.log crit;"
    echo "events { worker_connections 4096; }"
    echo "http { $(common_http "$tmp/ngp")"
    echo "  upstream healthy {"; for i in $(seq 1 10); do echo "    server 127.0.0.1:$((P_B + i));"; done; echo "    keepalive 64; }"
    echo "  upstream failing {"; for i in $(seq 1 9); do echo "    server 127.0.0.1:$((P_B + i));"; done
    echo "    server 127.0.0.1:$P_X; keepalive 64; }"
    for s in healthy:$P_NG failing:$((P_NG + 1)); do
      echo "  server { listen 127.0.0.1:${s#*:}; location / { proxy_pass http://${s%%:*}; proxy_http_version 1.1; proxy_set_header Connection \"\"; } }"
    done
    echo "}"
  } >"$tmp/ngp/nginx.conf"
}

# wrkrun URL HOSTHDR SECONDS [KILL_AFTER] -> "RPS P99MS RESPONSES NON2XX SOCKET_ERRORS"
wrkrun() {
  local url=$1 hdr=$2 secs=$3 kill_after=${4:-} out
  local args=(-t"$THREADS" -c"$CONNS" --latency -d"${secs}s")
  [[ -n $hdr ]] && args+=(-H "$hdr")
  if [[ -n $kill_after ]]; then
    (sleep "$kill_after"; kill -9 "$X_PID" $(pgrep -P "$X_PID" || true) 2>/dev/null || true) &
  fi
  out=$(wrk "${args[@]}" "$url")
  wait
  echo "$out" >>"$tmp/wrk.log"
  awk '
    /Requests\/sec/ {rps=$2}
    $1 == "99%" {v=$2; if (v ~ /us$/) {sub(/us/,"",v); v=v/1000} else if (v ~ /ms$/) {sub(/ms/,"",v)} else if (v ~ /s$/) {sub(/s/,"",v); v=v*1000}; p99=v}
    /requests in/ {n=$1}
    /Non-2xx or 3xx/ {bad=$NF}
    /Socket errors/ {gsub(",", ""); err=$6 + $8 + $10}
    END {printf "%s %s %d %d %d\n", rps, p99, n, bad, err}' <<<"$out"
}

pct() { python3 -c "import sys; n,b,e=map(int,sys.argv[1:4]); print('%.3f' % (100.0*(n-b)/(n+e)) if n+e else 'n/a')" "$1" "$2" "$3"; }
ratio() { python3 -c "import sys; a,b=float(sys.argv[1]),float(sys.argv[2]); print('%.2f' % (a/b) if b else 'n/a')" "$1" "$2"; }

echo "# sidecar-failure-bench $(date -u +%FT%TZ) on $(nproc) cores; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "wrk -t$THREADS -c$CONNS ${DURATION}s per measurement, after ${WARMUP}s of wrk on the healthy service; 1 KiB static file; nginx worker_processes auto; sidecar failure accrual in the 503 scenario: $ACCRUAL"
echo
echo "| scenario | proxy | healthy req/s | healthy p99 ms | failing req/s | failing p99 ms | p99 failing/healthy | responses | non-2xx | socket errors | success % | settled req/s | settled p99 ms | settled p99/healthy |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for scenario in $SCENARIOS; do
  for proxy in $PROXIES; do
    start_x "$([[ $scenario == kill ]] && echo normal || echo "$scenario")"
    if [[ $proxy == nginx ]]; then
      write_nginx_proxy
      bg ngp nginx -c "$tmp/ngp/nginx.conf" -p "$tmp/ngp"
      ppid=${pids[-1]}
      wait_port "$P_NG"; wait_port $((P_NG + 1))
      hurl="http://127.0.0.1:$P_NG/index.html"; furl="http://127.0.0.1:$((P_NG + 1))/index.html"; hh=""; fh=""
    else
      extra=()
      [[ $scenario == 503 && -n $ACCRUAL ]] && extra+=(--failure-accrual "$ACCRUAL")
      bg "sidecar-$scenario-$proxy" "${portage[@]}" sidecar --destination-addr "127.0.0.1:$P_CP" \
        --outbound-port "$P_SC" --admin-port "$P_SC_ADMIN" --balancer "$proxy" "${extra[@]}"
      ppid=${pids[-1]}
      wait_port "$P_SC"
      hurl="http://127.0.0.1:$P_SC/index.html"; furl=$hurl
      hh="Host: healthy.default.svc.cluster.local:$SVC_PORT"; fh="Host: failing.default.svc.cluster.local:$SVC_PORT"
      for i in $(seq 1 10); do curl -fsS -o /dev/null -H "$hh" "$hurl" 2>/dev/null && break; sleep 1; done
    fi
    wrk -t"$THREADS" -c"$CONNS" -d"${WARMUP}s" ${hh:+-H "$hh"} "$hurl" >/dev/null 2>&1 || true
    read -r hr hp _ _ _ < <(wrkrun "$hurl" "$hh" "$DURATION")
    kill_after=; [[ $scenario == kill ]] && kill_after=$((DURATION / 2))
    read -r fr fp n bad err < <(wrkrun "$furl" "$fh" "$DURATION" "$kill_after")
    read -r sr sp _ _ _ < <(wrkrun "$furl" "$fh" "$DURATION")
    echo "| $scenario | $proxy | $hr | $hp | $fr | $fp | $(ratio "$fp" "$hp") | $n | $bad | $err | $(pct "$n" "$bad" "$err") | $sr | $sp | $(ratio "$sp" "$hp") |"
    kill "$ppid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$ppid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$ppid" 2>/dev/null || true
  done
done
stop_x
echo
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
