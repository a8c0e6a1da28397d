#!/usr/bin/env bash
# Side-by-side loopback benchmark of the Portage edge hub against nginx proxy_pass, in front of the
# same upstream: an nginx that serves recorded Kubernetes objects (one pod, and a list of 1,000 pods)
# at the API server's paths, as JSON or as Kubernetes protobuf depending on the request's Accept
# (as kube-apiserver does for client-go), so both proxies relay the very same bytes. Then the
# upstream stops and the hub answers the same requests from its disk cache, in both encodings.
#   bench/hub-bench.sh            # DURATION=5 (seconds per measurement), CONNS=50, THREADS=2,
#                                 # PORTAGE_WARMUP=30 (seconds of wrk on the hub, get and list, before
#                                 # anything is measured: the JIT needs tens of seconds of traffic),
#                                 # BASE_PORT=27300, NGINX_WORKERS=auto (the nginx proxy's
#                                 # worker_processes), PORTAGE=<launcher command>, KEEP_TMP=1,
#                                 # JFR=1 (record the hub with Java Flight Recorder into $tmp)
# Prints markdown tables with ratios against nginx and between the encodings, the cache's bytes per
# object in each encoding, and the hub's live heap after a full GC.
set -euo pipefail

root=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)
DURATION=${DURATION:-5}
CONNS=${CONNS:-50}
THREADS=${THREADS:-2}
BASE=${BASE_PORT:-27300}
NGINX_WORKERS=${NGINX_WORKERS:-auto} # the nginx proxy's worker_processes (auto: as Debian ships it)
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
UA_JSON="User-Agent: coredns/1.11.1" # another one, whose cache is filled with JSON
ACCEPT_JSON="application/json"
ACCEPT_PB="application/vnd.kubernetes.protobuf,application/json" # what the kubelet sends

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
# The same objects as kube-apiserver encodes them for a protobuf client, made with the hub's codec
# (which checks that each reads back as the same JSON object).
read -r -a portage <<<"${PORTAGE:-$root/bin/portage}"
"${portage[@]}" --version >/dev/null # builds the jar once, before anything is timed
java_bin=""
for c in ${JAVA_HOME:+"$JAVA_HOME/bin/java"} /usr/lib/jvm/*/bin/java; do
  [[ -x $c ]] || continue
  v=$("$c" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')
  if [[ ${v%%.*} -ge 21 ]]; then java_bin=$c; break; fi
done
[[ -n $java_bin ]] || { echo "hub-bench: no JDK 21+ found (set JAVA_HOME)" >&2; exit 1; }
"$java_bin" -cp "${PORTAGE_JAR:-$root/cli/target/portage.jar}" "$root/bench/hub/ProtobufFixture.java" \
  "$tmp/pod.json" "$tmp/pod.pb" "$tmp/pods.json" "$tmp/pods.pb"
chmod 644 "$tmp"/*.json "$tmp"/*.pb

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
  types { application/json json; application/vnd.kubernetes.protobuf pb; }
  # kube-apiserver's negotiation, for the two types client-go asks for.
  map \$http_accept \$encoding { ~application/vnd\\.kubernetes\\.protobuf pb; default json; }
  server {
    listen 127.0.0.1:$P_UP;
    # Rewritten to a file name with an extension: nginx takes the Content-Type from the URI's.
    location = $GET_PATH { rewrite ^ /recorded/pod.\$encoding last; }
    location = $LIST_PATH { rewrite ^ /recorded/pods.\$encoding last; }
    location /recorded/ { internal; alias $tmp/; }
    location = /readyz { return 200 "ok"; }
  }
}
NG
cat >"$tmp/nginx-proxy.conf" <<NG
worker_processes $NGINX_WORKERS;
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

# PORTAGE overrides the launcher (e.g. PORTAGE="java -jar /path/portage.jar"; then PORTAGE_JAR too).
jfr=()
[[ -n ${JFR:-} ]] && jfr=(env "PORTAGE_JAVA_OPTS=-XX:StartFlightRecording=filename=$tmp/hub.jfr,settings=profile")
bg hub "${jfr[@]}" "${portage[@]}" hub --server-addr "http://127.0.0.1:$P_UP" --node-name edge-node-1 \
  --proxy-port "$P_HUB" --proxy-secure-port "$P_HUB_TLS" --serve-port "$P_HUB_SERVE" \
  --disk-cache-path "$tmp/cache" --root-dir "$tmp/yurthub" --max-requests-in-flight 100000 \
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
# Protobuf first: what a kubelet's cache holds (the hub stores each object as it first arrives).
for accept in "$ACCEPT_PB" "$ACCEPT_JSON"; do
  for port in "$P_NG" "$P_HUB"; do
    for path in "$GET_PATH" "$LIST_PATH"; do
      type=$(curl -fsS -o /dev/null -w '%{content_type}' -H "$UA" -H "Accept: $accept" "http://127.0.0.1:$port$path") \
        || { echo "port $port does not serve $path; logs in $tmp" >&2; KEEP_TMP=1; exit 1; }
      [[ $type == "${accept%%,*}" ]] || { echo "port $port answers $path as '$type' to Accept: $accept" >&2; KEEP_TMP=1; exit 1; }
    done
  done
done
# The same 1,000 pods cached as JSON for coredns (the kubelet's cache holds them as protobuf): the
# cache's bytes per object in each encoding, and offline answers given as cached (no conversion).
curl -fsS -o /dev/null -H "$UA_JSON" -H "Accept: $ACCEPT_JSON" "http://127.0.0.1:$P_HUB$LIST_PATH"

# warm_up SECONDS UA...: JIT warm-up of the hub's JVM (nginx needs none), SECONDS in all, spread
# over the get and the list in both encodings as each User-Agent header.
warm_up() {
  local total=$1 path accept ua each; shift
  (( total > 0 )) || return 0
  each=$(( (total + 4 * $# - 1) / (4 * $#) ))
  for path in "$GET_PATH" "$LIST_PATH"; do
    for accept in "$ACCEPT_PB" "$ACCEPT_JSON"; do
      for ua in "$@"; do
        wrk -t"$THREADS" -c"$CONNS" -H "$ua" -H "Accept: $accept" -d"${each}s" \
          "http://127.0.0.1:$P_HUB$path" >/dev/null 2>&1 || true
      done
    done
  done
}
warm=${PORTAGE_WARMUP:-30}
warm_up "$warm" "$UA"

# wrkrun PORT PATH ACCEPT [CONNS] [USER-AGENT HEADER] -> "RPS P99MS" (a 1 s warm-up run first, not
# reported)
wrkrun() {
  local port=$1 path=$2 accept=$3 conns=${4:-$CONNS} ua=${5:-$UA} out
  local threads=$(( THREADS < conns ? THREADS : conns ))
  local args=(-t"$threads" -c"$conns" --latency -H "$ua" -H "Accept: $accept")
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
le() { python3 -c "import sys; print('met' if float(sys.argv[1]) <= float(sys.argv[2]) else 'missed')" "$1" "$2"; }
metric() { # metric NAME{LABELS}: the hub's current value
  curl -fsS "http://127.0.0.1:$P_HUB_SERVE/metrics" | awk -v m="$1" 'index($0, m " ") == 1 {print $2}'
}
live_heap_mib() { # the hub JVM's heap in use right after a full GC
  local jcmd hub_pid
  jcmd=$(dirname "$(readlink -f "$java_bin")")/jcmd
  hub_pid=$(pgrep -f -- "--proxy-port $P_HUB" | head -1) || true
  [[ -x $jcmd && -n $hub_pid ]] || { echo "n/a"; return; }
  "$jcmd" "$hub_pid" GC.run >/dev/null 2>&1 || true
  "$jcmd" "$hub_pid" GC.heap_info 2>/dev/null | awk '/ used / || /used [0-9]/ {for (i = 1; i <= NF; i++) if ($i == "used") {v = $(i + 1); sub(/K,?$/, "", v); printf "%.1f\n", v / 1024; exit}}'
}
accept_of() { [[ $1 == pb ]] && echo "$ACCEPT_PB" || echo "$ACCEPT_JSON"; }
median() { python3 -c "import statistics, sys; print(round(statistics.median(map(float, sys.argv[1:])), 2))" "$@"; }
ROUNDS=${ROUNDS:-3}
# alternate PORT PATH CONNS NAME: the JSON and the protobuf request, ROUNDS times in turn, so load
# that comes and goes on the machine falls on both alike; sets R/P[NAME-json|pb] to the medians and
# prints one table row per encoding with every round's figures. JSON as UA_JSON when NAME is
# offline (coredns's JSON cache, answered as stored), else as UA.
alternate() {
  local port=$1 path=$2 conns=$3 name=$4 enc ua i r p
  declare -A rs ps
  for (( i = 0; i < ROUNDS; i++ )); do
    for enc in json pb; do
      ua=$UA; [[ $enc == json && $name == off* ]] && ua=$UA_JSON
      read -r r p < <(wrkrun "$port" "$path" "$(accept_of $enc)" "$conns" "$ua")
      rs[$enc]+="$r "; ps[$enc]+="$p "
    done
  done
  for enc in json pb; do
    # shellcheck disable=SC2086
    R[$name-$enc]=$(median ${rs[$enc]}); P[$name-$enc]=$(median ${ps[$enc]})
    echo "| $enc | ${R[$name-$enc]} | ${P[$name-$enc]} | ${rs[$enc]% } | ${ps[$enc]% } |"
  done
}

sizes=""
for f in pod.json pod.pb pods.json pods.pb; do sizes+="$f $(stat -c %s "$tmp/$f") bytes; "; done
echo "# hub-bench $(date -u +%FT%TZ) on $(nproc) cores; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "duration ${DURATION}s per measurement after ${warm}s of JIT warm-up on the hub, wrk -t$THREADS -c$CONNS, User-Agent kubelet;"
echo "recorded objects served by nginx: ${sizes% }"
echo "JSON: Accept: $ACCEPT_JSON; protobuf: Accept: $ACCEPT_PB (the kubelet's)"
echo
echo "## Online (proxying to the API server)"
echo
echo "| request | encoding | proxy | req/s | p99 ms | req/s vs nginx | p99 vs nginx |"
echo "|---|---|---|---|---|---|---|"
declare -A R P
for what in get list; do
  path=$GET_PATH; [[ $what == list ]] && path=$LIST_PATH
  for enc in json pb; do
    read -r R[nginx-$what-$enc] P[nginx-$what-$enc] < <(wrkrun "$P_NG" "$path" "$(accept_of $enc)")
    read -r R[hub-$what-$enc] P[hub-$what-$enc] < <(wrkrun "$P_HUB" "$path" "$(accept_of $enc)")
    for p in nginx hub; do
      k=$p-$what-$enc
      echo "| $what | $enc | $p | ${R[$k]} | ${P[$k]} | $(ratio "${R[$k]}" "${R[nginx-$what-$enc]}") | $(ratio "${P[$k]}" "${P[nginx-$what-$enc]}") |"
    done
  done
done
# The machine's floor for the list at this concurrency: the upstream nginx serving the recorded file
# itself (no proxy). A p99 goal below this floor is a goal for the hardware, not for the hub.
read -r R[floor-list] P[floor-list] < <(wrkrun "$P_UP" "$LIST_PATH" "$ACCEPT_JSON")
echo
echo "Floor: the upstream nginx serving the 1,000-pod JSON list file itself, -c$CONNS: ${R[floor-list]} req/s, p99 ${P[floor-list]} ms"
echo
echo "The pod get through the hub, JSON and protobuf in turn, $ROUNDS rounds:"
echo
echo "| encoding | median req/s | median p99 ms | req/s each round | p99 each round |"
echo "|---|---|---|---|---|"
alternate "$P_HUB" "$GET_PATH" "$CONNS" get
echo
echo "Online protobuf pod get vs JSON pod get through the hub (medians): req/s $(ratio "${R[get-pb]}" "${R[get-json]}")×," \
  "p99 $(ratio "${P[get-pb]}" "${P[get-json]}")× (goal: req/s ≥ 1, p99 ≤ 1)"
heap_online=$(live_heap_mib)
echo "load average after online: $(cut -d' ' -f1-3 /proc/loadavg)"

# Offline: stop the upstream; wait until the hub's health check says so (1 s interval here).
kill "$upstream_pid"; wait "$upstream_pid" 2>/dev/null || true
hub_healthy 0
echo
echo "## Offline (the upstream is stopped; the hub answers from its disk cache)"
echo
# JIT warm-up of the offline paths (answers from the cache, conversions between the encodings): a
# hub that has been offline for a while, as outages last minutes and more.
warm_up "$warm" "$UA" "$UA_JSON"
echo "Each client's cache: the kubelet's holds protobuf (what it was sent), coredns's JSON; \"converted\":"
echo "a JSON answer made from the protobuf object (the list once, then kept until the cache changes)."
echo
echo "| request | client asks | cached as | connections | hub req/s | hub p99 ms |"
echo "|---|---|---|---|---|---|"
for what in get list; do
  path=$GET_PATH; [[ $what == list ]] && path=$LIST_PATH
  read -r R[off-$what-json] P[off-$what-json] < <(wrkrun "$P_HUB" "$path" "$ACCEPT_JSON" "$CONNS" "$UA_JSON")
  echo "| $what | JSON | JSON | $CONNS | ${R[off-$what-json]} | ${P[off-$what-json]} |"
  read -r R[off-$what-pb] P[off-$what-pb] < <(wrkrun "$P_HUB" "$path" "$ACCEPT_PB")
  echo "| $what | protobuf | protobuf | $CONNS | ${R[off-$what-pb]} | ${P[off-$what-pb]} |"
  read -r R[off-$what-conv] P[off-$what-conv] < <(wrkrun "$P_HUB" "$path" "$ACCEPT_JSON")
  echo "| $what | JSON | protobuf (converted) | $CONNS | ${R[off-$what-conv]} | ${P[off-$what-conv]} |"
done
heap_offline=$(live_heap_mib)
echo
# The same list from one connection: the latency of a single client (no queueing behind 49 others).
echo "The 1,000-pod list from one connection (JSON from coredns's JSON cache, protobuf from the"
echo "kubelet's), in turn, $ROUNDS rounds:"
echo
echo "| encoding | median req/s | median p99 ms | req/s each round | p99 each round |"
echo "|---|---|---|---|---|"
alternate "$P_HUB" "$LIST_PATH" 1 off-list1
echo
echo "Offline 1,000-pod list from one client, protobuf p99 ${P[off-list1-pb]} ms vs JSON ${P[off-list1-json]} ms:" \
  "$(le "${P[off-list1-pb]}" "${P[off-list1-json]}") (goal: protobuf ≤ JSON); ≤ 10 ms: $(le "${P[off-list1-pb]}" 10)"
echo
echo "## Memory"
echo
json_bytes=$(metric 'portage_hub_cache_size_bytes{component="coredns"}')
pb_bytes=$(metric 'portage_hub_cache_size_bytes{component="kubelet"}')
echo "| what | JSON | protobuf | protobuf vs JSON |"
echo "|---|---|---|---|"
per_pod() { python3 -c "import sys; print(round(float(sys.argv[1]) / 1000))" "$1"; }
echo "| disk cache, bytes per cached pod (1,000-pod list, file headers and .list included) | $(per_pod "$json_bytes") | $(per_pod "$pb_bytes") | $(ratio "$pb_bytes" "$json_bytes") |"
echo "| offline list answer held in memory (memoised), bytes per pod | $(( $(stat -c %s "$tmp/pods.json") / 1000 )) | $(( $(stat -c %s "$tmp/pods.pb") / 1000 )) | $(ratio "$(stat -c %s "$tmp/pods.pb")" "$(stat -c %s "$tmp/pods.json")") |"
echo
echo "Hub live heap after a full GC: ${heap_online} MiB after the online runs, ${heap_offline} MiB after the offline runs."
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
[[ -n ${JFR:-} ]] && { KEEP_TMP=1; echo "JFR recording (written when the hub exits): $tmp/hub.jfr"; }
exit 0
