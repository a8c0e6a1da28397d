#!/usr/bin/env bash
# Side-by-side loopback benchmark of the Portage edge hub against nginx proxy_pass, in front of the
# same upstream: an nginx that serves recorded Kubernetes JSON (one pod, and a list of 1,000 pods)
# at the API server's paths, so both proxies relay the very same bytes. Then the upstream stops and
# the hub answers the same requests from its disk cache.
#   bench/hub-bench.sh            # DURATION=5 (seconds per measurement), CONNS=50, THREADS=2,
#                                 # PORTAGE_WARMUP=30 (seconds of wrk on the hub, get and list, before
#                                 # anything is measured: the JIT needs tens of seconds of traffic),
#                                 # BASE_PORT=27300, PORTAGE=<launcher command>, KEEP_TMP=1,
#                                 # JFR=1 (record the hub with Java Flight Recorder into $tmp)
# Prints markdown tables with ratios against nginx.
set -euo pipefail

root=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)
DURATION=${DURATION:-5}
CONNS=${CONNS:-50}
THREADS=${THREADS:-2}
BASE=${BASE_PORT:-27300}
tmp=$(mktemp -d /tmp/portage-hub-bench.XXXXXX)
chmod 755 "$tmp" # nginx workers (another user) read the recorded JSON from here
pids=()

# shellcheck source=processes.sh
source "$root/bench/processes.sh"

P_UP=$BASE                 # upstream "API server": nginx serving recorded JSON
P_NG=$((BASE + 1))         # nginx proxy_pass in front of it
P_HUB=$((BASE + 2)); P_HUB_SERVE=$((BASE + 3)); P_HUB_TLS=$((BASE + 4))
GET_PATH=/api/v1/namespaces/default/pods/pod-0
LIST_PATH=/api/v1/namespaces/default/pods
UA="User-Agent: kubelet/v1.30.0 (linux/amd64) kubernetes/bench" # a component the hub caches

# Recorded JSON: pods shaped like a kubelet sees them (labels, owner, one container, status).
python3 - "$tmp" <<'PY'
import json, sys
out = sys.argv[1]
def pod(i):
    return {
        "metadata": {"name": f"pod-{i}", "namespace": "default", "uid": f"6f1c2a7e-0000-4000-8000-{i:012d}",
                     "resourceVersion": str(1000 + i), "creationTimestamp": "2026-11-01T10:00:00Z",
                     "labels": {"app": f"app-{i % 20}", "pod-template-hash": "5d8f7c9b4"},
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": f"app-{i % 20}-5d8f7c9b4",
                                          "uid": "0b7e2d4c-1111-4000-8000-000000000000", "controller": True}]},
        "spec": {"nodeName": "edge-node-1", "restartPolicy": "Always", "serviceAccountName": "default",
                 "containers": [{"name": "app", "image": "registry.example/app:1.4.2",
                                 "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                                 "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}}}]},
        "status": {"phase": "Running", "podIP": f"10.244.{i // 250}.{i % 250 + 2}", "hostIP": "192.168.1.10",
                   "startTime": "2026-11-01T10:00:01Z",
                   "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2026-11-01T10:00:05Z"}]},
    }
items = [pod(i) for i in range(1000)]
one = dict(kind="Pod", apiVersion="v1", **pod(0))
with open(f"{out}/pod.json", "w") as f: json.dump(one, f, separators=(",", ":"))
with open(f"{out}/pods.json", "w") as f:
    json.dump({"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": "5000"}, "items": items}, f,
              separators=(",", ":"))
PY
chmod 644 "$tmp"/*.json

cat >"$tmp/nginx.conf" <<NG
worker_processes 1;
daemon off;
pid $tmp/nginx.pid;
error_log $tmp/nginx-error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $tmp/nb; proxy_temp_path $tmp/np; fastcgi_temp_path $tmp/nf;
  uwsgi_temp_path $tmp/nu; scgi_temp_path $tmp/ns;
  keepalive_requests 1000000;
  default_type application/json;
  server {
    listen 127.0.0.1:$P_UP;
    location = $GET_PATH { alias $tmp/pod.json; }
    location = $LIST_PATH { alias $tmp/pods.json; }
    location = /readyz { return 200 "ok"; }
  }
}
NG
cat >"$tmp/nginx-proxy.conf" <<NG
worker_processes 1;
daemon off;
pid $tmp/nginx-proxy.pid;
error_log $tmp/nginx-proxy-error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $tmp/pb; proxy_temp_path $tmp/pp; fastcgi_temp_path $tmp/pf;
  uwsgi_temp_path $tmp/pu; scgi_temp_path $tmp/ps;
  keepalive_requests 1000000;
  upstream apiserver { server 127.0.0.1:$P_UP; keepalive 64; }
  server {
    listen 127.0.0.1:$P_NG;
    location / { proxy_pass http://apiserver; proxy_http_version 1.1; proxy_set_header Connection ""; }
  }
}
NG
bg upstream nginx -c "$tmp/nginx.conf" -p "$tmp"
upstream_pid=${pids[-1]}
bg nginx-proxy nginx -c "$tmp/nginx-proxy.conf" -p "$tmp"

# PORTAGE overrides the launcher (e.g. PORTAGE="java -jar /path/portage.jar").
read -r -a portage <<<"${PORTAGE:-$root/bin/portage}"
"${portage[@]}" --version >/dev/null # builds the jar once, before anything is timed
jfr=()
[[ -n ${JFR:-} ]] && jfr=(env "PORTAGE_JAVA_OPTS=-XX:StartFlightRecording=filename=$tmp/hub.jfr,settings=profile")
bg hub "${jfr[@]}" "${portage[@]}" hub --server-addr "http://127.0.0.1:$P_UP" \
  --proxy-port "$P_HUB" --proxy-secure-port "$P_HUB_TLS" --serve-port "$P_HUB_SERVE" \
  --disk-cache-path "$tmp/cache" --max-requests-in-flight 100000 \
  --heartbeat-interval-seconds 1 --heartbeat-timeout-seconds 2 \
  --heartbeat-healthy-threshold 1 --heartbeat-failed-retry 1
for p in "$P_UP" "$P_NG" "$P_HUB" "$P_HUB_SERVE"; do wait_port "$p"; done
hub_healthy() { # hub_healthy 1|0: up to 30 s for the hub's view of the upstream to be that
  local i
  for i in $(seq 1 300); do
    curl -fsS "http://127.0.0.1:$P_HUB_SERVE/metrics" | grep -q "^portage_hub_upstream_healthy{.*} $1" && return 0
    sleep 0.1
  done
  echo "the hub never saw the upstream as healthy=$1; logs in $tmp" >&2; KEEP_TMP=1; exit 1
}
hub_healthy 1 # a first probe can time out while the JVM warms up
for port in "$P_NG" "$P_HUB"; do
  for path in "$GET_PATH" "$LIST_PATH"; do
    curl -fsS -o /dev/null -H "$UA" "http://127.0.0.1:$port$path" \
      || { echo "port $port does not serve $path; logs in $tmp" >&2; KEEP_TMP=1; exit 1; }
  done
done

# JIT warm-up of the hub's JVM (nginx needs none): half on the get, half on the list.
warm=${PORTAGE_WARMUP:-30}
if (( warm > 0 )); then
  wrk -t"$THREADS" -c"$CONNS" -H "$UA" -d"$(( (warm + 1) / 2 ))s" "http://127.0.0.1:$P_HUB$GET_PATH" >/dev/null 2>&1 || true
  wrk -t"$THREADS" -c"$CONNS" -H "$UA" -d"$(( warm / 2 ))s" "http://127.0.0.1:$P_HUB$LIST_PATH" >/dev/null 2>&1 || true
fi

# wrkrun PORT PATH -> "RPS P99MS" (a 1 s warm-up run first, not reported)
wrkrun() {
  local port=$1 path=$2 conns=${3:-$CONNS} out
  local threads=$(( THREADS < conns ? THREADS : conns ))
  local args=(-t"$threads" -c"$conns" --latency -H "$UA")
  wrk "${args[@]}" -d1s "http://127.0.0.1:$port$path" >/dev/null 2>&1 || true
  out=$(wrk "${args[@]}" -d"${DURATION}s" "http://127.0.0.1:$port$path")
  echo "$out" >>"$tmp/wrk.log"
  if grep -q "Non-2xx" <<<"$out"; then echo "non-2xx responses on port $port $path" >&2; fi
  local rps p99
  rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
  p99=$(awk '$1 == "99%" {v=$2; if (v ~ /us$/) {sub(/us/,"",v); v=v/1000} else if (v ~ /ms$/) {sub(/ms/,"",v)} else if (v ~ /s$/) {sub(/s/,"",v); v=v*1000}; print v}' <<<"$out")
  echo "$rps $p99"
}

ratio() { python3 -c "import sys; a,b=float(sys.argv[1]),float(sys.argv[2]); print('%.2f' % (a/b) if b else 'n/a')" "$1" "$2"; }

list_bytes=$(stat -c %s "$tmp/pods.json"); get_bytes=$(stat -c %s "$tmp/pod.json")
echo "# hub-bench $(date -u +%FT%TZ) on $(nproc) cores; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "duration ${DURATION}s per measurement after ${warm}s of JIT warm-up on the hub, wrk -t$THREADS -c$CONNS, User-Agent kubelet;"
echo "pod get $get_bytes bytes, 1,000-pod list $list_bytes bytes (recorded JSON served by nginx)"
echo
echo "## Online (proxying to the API server)"
echo
echo "| request | proxy | req/s | p99 ms | req/s vs nginx | p99 vs nginx |"
echo "|---|---|---|---|---|---|"
declare -A R P
for what in get list; do
  path=$GET_PATH; [[ $what == list ]] && path=$LIST_PATH
  read -r R[nginx-$what] P[nginx-$what] < <(wrkrun "$P_NG" "$path")
  read -r R[hub-$what] P[hub-$what] < <(wrkrun "$P_HUB" "$path")
  for p in nginx hub; do
    echo "| $what | $p | ${R[$p-$what]} | ${P[$p-$what]} | $(ratio "${R[$p-$what]}" "${R[nginx-$what]}") | $(ratio "${P[$p-$what]}" "${P[nginx-$what]}") |"
  done
done
# The machine's floor for the list at this concurrency: the upstream nginx serving the recorded file
# itself (no proxy). A p99 goal below this floor is a goal for the hardware, not for the hub.
read -r R[floor-list] P[floor-list] < <(wrkrun "$P_UP" "$LIST_PATH")
echo
echo "Floor: the upstream nginx serving the 1,000-pod list file itself, -c$CONNS: ${R[floor-list]} req/s, p99 ${P[floor-list]} ms"
echo
echo "load average after online: $(cut -d' ' -f1-3 /proc/loadavg)"

# Offline: stop the upstream; wait until the hub's health check says so (1 s interval here).
kill "$upstream_pid"; wait "$upstream_pid" 2>/dev/null || true
hub_healthy 0
echo
echo "## Offline (the upstream is stopped; the hub answers from its disk cache)"
echo
echo "| request | hub req/s | hub p99 ms | p99 vs nginx online | goal |"
echo "|---|---|---|---|---|"
for what in get list; do
  path=$GET_PATH; [[ $what == list ]] && path=$LIST_PATH
  read -r R[off-$what] P[off-$what] < <(wrkrun "$P_HUB" "$path")
  goal=""; [[ $what == list ]] && goal="p99 ≤ 10 ms: $(python3 -c "import sys; print('met' if float(sys.argv[1]) <= 10 else 'missed')" "${P[off-$what]}")"
  echo "| $what | ${R[off-$what]} | ${P[off-$what]} | $(ratio "${P[off-$what]}" "${P[nginx-$what]}") | $goal |"
done
# The same list from one connection: the latency of a single client (no queueing behind 49 others).
read -r R[off-list1] P[off-list1] < <(wrkrun "$P_HUB" "$LIST_PATH" 1)
echo "| list, 1 connection | ${R[off-list1]} | ${P[off-list1]} | | p99 ≤ 10 ms: $(python3 -c "import sys; print('met' if float(sys.argv[1]) <= 10 else 'missed')" "${P[off-list1]}") |"
echo
echo "Goal online: hub ≥ 0.8× nginx req/s — get $(ratio "${R[hub-get]}" "${R[nginx-get]}")×, list $(ratio "${R[hub-list]}" "${R[nginx-list]}")×"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
[[ -n ${JFR:-} ]] && { KEEP_TMP=1; echo "JFR recording (written when the hub exits): $tmp/hub.jfr"; }
exit 0
