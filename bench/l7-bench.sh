#!/usr/bin/env bash
# L7 proxies side by side, in one run, in front of one nginx origin: the Portage sidecar (tiny
# responses) and the Portage edge hub (one pod as JSON, kubelet User-Agent, cached as it passes)
# against nginx proxy_pass and HAProxy as Debian ships them (nginx `worker_processes auto`, HAProxy
# with no thread setting: one thread per core), plus nginx with one worker as a tuned variant beside
# them. Every proxy keeps its upstream connections alive. For each path and each concurrency, every
# proxy gets a wrk warm-up and then a measured wrk run; the harness reads the CPU time of every
# process (the proxy, the origin, wrk) and, for the Portage JVMs, the bytes allocated per request
# from a JFR recording of jdk.ThreadAllocationStatistics (the ThreadMXBean per-thread allocation
# counters, sampled every 100 ms; nothing else is recorded).
#   bench/l7-bench.sh            # DURATION=10 (seconds per measured run), WARMUP=10 (seconds of wrk
#                                # on the same proxy before each measured run), THREADS=2,
#                                # CONNS_LIST="50 200", PATHS="sidecar hub",
#                                # PROXIES="nginx haproxy nginx-1w portage" (order of the runs;
#                                # "direct" adds wrk straight to the origin, no proxy: the latency
#                                # the host itself gives two wrk threads and the origin's workers),
#                                # ROUNDS=1 (measured runs per proxy, path and concurrency; the
#                                # proxies take turns, the order reversed every other round, and the
#                                # tables give medians, each ratio the median of its rounds' ratios
#                                # against nginx with their range: a busy or jittery host moves every
#                                # proxy, and one run per proxy cannot tell that from a difference),
#                                # PORTAGE_WARMUP=20 (seconds of wrk on each Portage JVM once, before
#                                # anything is measured: the JIT needs tens of seconds of traffic),
#                                # BASE_PORT=27500, PORTAGE=<launcher command>, KEEP_TMP=1,
#                                # PROFILE=1 (record the Portage JVMs with JFR's profile settings into
#                                # $tmp as well: CPU and allocation samples, placed right with
#                                # -XX:+DebugNonSafepoints; adds overhead),
#                                # CSV_DIR=<dir> (writes l7-*.csv for the plot tool there),
#                                # PERF_STAT=1 (perf stat of every proxy's syscalls, context switches
#                                # (voluntary and involuntary apart, from /proc) and migrations, and
#                                # its user/system CPU ticks, during each measured
#                                # run, and the TCP segments the host sent meanwhile (all of the
#                                # run's traffic is on loopback), into $tmp/perf-*.txt and
#                                # $tmp/perf.txt),
#                                # JAVA_OPTS_EXTRA (more JVM options for the Portage JVMs)
# Prints markdown tables with ratios against nginx at its defaults and, with ROUNDS > 1, how many
# rounds each proxy won against nginx in the same round (p99, req/s), with a one-sided sign test.
set -euo pipefail

root=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)
DURATION=${DURATION:-10}
WARMUP=${WARMUP:-10}
THREADS=${THREADS:-2}
CONNS_LIST=${CONNS_LIST:-50 200}
PATHS=${PATHS:-sidecar hub}
PROXIES=${PROXIES:-nginx haproxy nginx-1w portage}
PORTAGE_WARMUP=${PORTAGE_WARMUP:-20}
ROUNDS=${ROUNDS:-1}
for p in $PROXIES; do
  case $p in nginx | haproxy | nginx-1w | portage | direct) ;;
    *) echo "unknown proxy in PROXIES: $p (nginx, haproxy, nginx-1w, portage or direct)" >&2; exit 2 ;;
  esac
done
BASE=${BASE_PORT:-27500}
[[ -n ${CSV_DIR:-} ]] && mkdir -p "$CSV_DIR" # now, so a path it cannot make fails before the runs
tmp=$(mktemp -d /tmp/portage-l7-bench.XXXXXX)
chmod 755 "$tmp" # nginx workers (another user) serve files from here
pids=()

# shellcheck source=processes.sh
source "$root/bench/processes.sh"
need nginx nginx # the origin, whatever PROXIES says
need wrk wrk
[[ " $PROXIES " != *" haproxy "* ]] || need haproxy haproxy

P_ORIGIN=$BASE
P_NG=$((BASE + 1)); P_NG1=$((BASE + 2)); P_HA=$((BASE + 3))
P_CP_GRPC=$((BASE + 10)); P_CP_ADMIN=$((BASE + 11)); P_SC=$((BASE + 12)); P_SC_ADMIN=$((BASE + 13))
P_HUB=$((BASE + 20)); P_HUB_SERVE=$((BASE + 21)); P_HUB_TLS=$((BASE + 22))
SVC_PORT=8080
SC_HOST="Host: bench.default.svc.cluster.local:$SVC_PORT"
POD_PATH=/api/v1/namespaces/default/pods/pod-0
UA="User-Agent: kubelet/v1.30.0 (linux/amd64) kubernetes/bench" # a component the hub caches

# The sidecar's tiny response: 1 KiB of text. The hub's: one pod as a kubelet sees it.
head -c 1024 /dev/urandom | base64 -w0 | head -c 1024 >"$tmp/index.html"
python3 - "$tmp/pod.json" <<'PY'
import json, sys
pod = {"kind": "Pod", "apiVersion": "v1",
       "metadata": {"name": "pod-0", "namespace": "default", "uid": "6f1c2a7e-0000-4000-8000-000000000000",
                    "resourceVersion": "1000", "creationTimestamp": "2026-11-01T10:00:00Z",
                    "labels": {"app": "app-0", "pod-template-hash": "5d8f7c9b4"},
                    "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "app-0-5d8f7c9b4",
                                         "uid": "0b7e2d4c-1111-4000-8000-000000000000", "controller": True}]},
       "spec": {"nodeName": "edge-node-1", "restartPolicy": "Always", "serviceAccountName": "default",
                "containers": [{"name": "app", "image": "registry.example/app:1.4.2",
                                "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                                "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}}}]},
       "status": {"phase": "Running", "podIP": "10.244.0.2", "hostIP": "192.168.1.10",
                  "startTime": "2026-11-01T10:00:01Z",
                  "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2026-11-01T10:00:05Z"}]}}
json.dump(pod, open(sys.argv[1], "w"), separators=(",", ":"))
PY
chmod 644 "$tmp"/index.html "$tmp"/pod.json

# nginx_conf NAME WORKERS SERVER-BLOCK: an nginx of its own (own pid file, temp dirs, error log).
nginx_conf() {
  cat >"$tmp/$1.conf" <<NG
worker_processes $2;
daemon off;
pid $tmp/$1.pid;
error_log $tmp/$1-error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $tmp/$1-b; proxy_temp_path $tmp/$1-p; fastcgi_temp_path $tmp/$1-f;
  uwsgi_temp_path $tmp/$1-u; scgi_temp_path $tmp/$1-s;
  keepalive_requests 1000000;
  upstream origin { server 127.0.0.1:$P_ORIGIN; keepalive 64; }
  $3
}
NG
}
# The origin (as shipped: one worker per core) serves both bodies and the API server's /readyz.
nginx_conf origin auto "server {
    listen 127.0.0.1:$P_ORIGIN; root $tmp;
    location = /index.html { default_type text/plain; }
    location = $POD_PATH { default_type application/json; alias $tmp/pod.json; }
    location = /readyz { return 200 ok; }
  }"
proxy_block() { echo "server { listen 127.0.0.1:$1; location / { proxy_pass http://origin; proxy_http_version 1.1; proxy_set_header Connection \"\"; } }"; }
nginx_conf nginx auto "$(proxy_block "$P_NG")"
nginx_conf nginx-1w 1 "$(proxy_block "$P_NG1")"
bg origin nginx -c "$tmp/origin.conf" -p "$tmp"
declare -A PID
PID[origin]=${pids[-1]}
bg nginx nginx -c "$tmp/nginx.conf" -p "$tmp"
PID[nginx]=${pids[-1]}
bg nginx-1w nginx -c "$tmp/nginx-1w.conf" -p "$tmp"
PID[nginx-1w]=${pids[-1]}

# HAProxy at its defaults: only what a config must say (mode, timeouts, addresses). Keep-alive on
# both sides and safe connection reuse are HAProxy 2.6's defaults.
cat >"$tmp/haproxy.cfg" <<HA
defaults
  mode http
  timeout connect 5s
  timeout client 60s
  timeout server 60s
listen l7
  bind 127.0.0.1:$P_HA
  server s1 127.0.0.1:$P_ORIGIN
HA
bg haproxy haproxy -f "$tmp/haproxy.cfg"
PID[haproxy]=${pids[-1]}

bench_service "$tmp/cp" "$SVC_PORT" "$P_ORIGIN"

# Allocation counters only: a JFR recording of jdk.ThreadAllocationStatistics every 100 ms.
alloc_jfc "$tmp/alloc.jfc"

# PORTAGE overrides the launcher (e.g. PORTAGE="java -jar /path/portage.jar").
read -r -a portage <<<"${PORTAGE:-$root/bin/portage}"
"${portage[@]}" --version >/dev/null # builds the jar once, before anything is timed
java_home=$(dirname "$(dirname "$(readlink -f "$(ls /usr/lib/jvm/temurin-25-jdk-amd64/bin/java 2>/dev/null || command -v java)")")")
jvm_opts() { # jvm_opts NAME: the allocation recording, PROFILE's; nothing else (our defaults)
  local o="-XX:StartFlightRecording=name=alloc,settings=$tmp/alloc.jfc,filename=$tmp/$1-alloc.jfr"
  # DebugNonSafepoints: without it JFR charges a sample inside inlined code to a nearby method.
  [[ -n ${PROFILE:-} ]] && o+=" -XX:StartFlightRecording=name=profile,settings=profile,filename=$tmp/$1-profile.jfr -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints"
  echo "$o ${JAVA_OPTS_EXTRA:-}"
}
bg control-plane "${portage[@]}" \
  control-plane --source files --dir "$tmp/cp" --grpc-port "$P_CP_GRPC" --admin-port "$P_CP_ADMIN"
wait_port "$P_CP_GRPC"
# bin/portage passes PORTAGE_JAVA_OPTS to java; a raw `java ... -jar` command gets them through the
# JVM's own JAVA_TOOL_OPTIONS (give it bin/portage's JVM options itself).
jvm_env=PORTAGE_JAVA_OPTS; [[ $(basename "${portage[0]}") == java ]] && jvm_env=JAVA_TOOL_OPTIONS
bg sidecar env "$jvm_env=$(jvm_opts sidecar)" "${portage[@]}" sidecar \
  --destination-addr "127.0.0.1:$P_CP_GRPC" --outbound-port "$P_SC" --admin-port "$P_SC_ADMIN"
PID[sidecar]=${pids[-1]} # bin/portage execs java (env too), so this is the JVM
bg hub env "$jvm_env=$(jvm_opts hub)" "${portage[@]}" hub --server-addr "http://127.0.0.1:$P_ORIGIN" \
  --node-name edge-node-1 --root-dir "$tmp/yurthub" --proxy-port "$P_HUB" --proxy-secure-port "$P_HUB_TLS" --serve-port "$P_HUB_SERVE" \
  --disk-cache-path "$tmp/cache" --max-requests-in-flight 100000
PID[hub]=${pids[-1]}
for p in "$P_ORIGIN" "$P_NG" "$P_NG1" "$P_HA" "$P_SC" "$P_HUB"; do wait_port "$p"; done

# The first request starts the sidecar's discovery and the hub's first health check: try a while.
served() { # served URL [HEADER...]: up to 30 s for a 200
  local url=$1 i; shift
  local hdrs=(); for h in "$@"; do hdrs+=(-H "$h"); done
  for i in $(seq 1 60); do
    curl -fsS -o /dev/null "${hdrs[@]}" "$url" 2>/dev/null && return 0
    sleep 0.5
  done
  echo "$url is not served; logs in $tmp" >&2; KEEP_TMP=1; exit 1
}
for port in "$P_NG" "$P_NG1" "$P_HA" "$P_SC"; do served "http://127.0.0.1:$port/index.html" "$SC_HOST"; done
for port in "$P_NG" "$P_NG1" "$P_HA" "$P_HUB"; do served "http://127.0.0.1:$port$POD_PATH" "$UA"; done

# path_args PATH -> port-independent wrk arguments and URL path of a bench path
path_url() { [[ $1 == sidecar ]] && echo /index.html || echo "$POD_PATH"; }
path_hdr() { [[ $1 == sidecar ]] && echo "$SC_HOST" || echo "$UA"; }
proxy_port() { # proxy_port PROXY PATH
  case $1 in
    nginx) echo "$P_NG" ;; nginx-1w) echo "$P_NG1" ;; haproxy) echo "$P_HA" ;;
    portage) [[ $2 == sidecar ]] && echo "$P_SC" || echo "$P_HUB" ;;
    direct) echo "$P_ORIGIN" ;;
  esac
}
proxy_pid() { [[ $1 == portage ]] && echo "${PID[$2]}" || echo "${PID[$1]:-}"; }

# family PID -> PID and its children (nginx's workers)
family() { echo "$1" $(pgrep -P "$1" || true); }

# cputicks PID -> user+system clock ticks of PID and its children
cputicks() { local u s; read -r u s < <(cpusplit "$1"); echo $((u + s)); } # no PID: 0
HZ=$(getconf CLK_TCK)
# outsegs -> TCP segments sent by the whole host so far (/proc/net/snmp Tcp OutSegs; for PERF_STAT:
# every process of a run talks over loopback, so the delta over a run is its packets)
outsegs() {
  awk '/^Tcp:/ { if (!n) { for (i = 1; i <= NF; i++) if ($i == "OutSegs") n = i } else print $n }' /proc/net/snmp
}

# cpusplit PID -> "user system" clock ticks of PID and its children
cpusplit() {
  local u=0 s=0 p
  [[ -n $1 ]] || { echo "0 0"; return; } # "direct": no proxy process
  for p in $(family "$1"); do
    read -r pu ps < <(awk '{print $14, $15}' "/proc/$p/stat" 2>/dev/null || echo 0 0)
    u=$((u + pu)); s=$((s + ps))
  done
  echo "$u $s"
}

# switches PID -> "voluntary involuntary" context switches so far of every thread of PID and its
# children (for PERF_STAT: an involuntary one is a preemption, the thread had work left)
switches() {
  local p
  for p in $(family "$1"); do cat /proc/"$p"/task/*/status 2>/dev/null || true; done |
    awk '/^voluntary_ctxt_switches/ {v += $2} /^nonvoluntary_ctxt_switches/ {n += $2} END {print v + 0, n + 0}'
}

# workerticks PID -> "pid:ticks" (user+system) of each child of PID (nginx's workers)
workerticks() { local w; for w in $(pgrep -P "$1" || true); do echo -n "$w:$(cputicks "$w") "; done; }
# busiest BEFORE AFTER -> the largest share one worker had of the ticks between two workerticks
# (for PERF_STAT: a proxy that holds most of its origin connections on one origin worker makes
# that worker the bottleneck; 0.50 is an even split over two workers)
busiest() {
  python3 -c 'import sys
a = dict(x.split(":") for x in sys.argv[1].split())
d = [int(t) - int(a.get(w, t)) for w, t in (x.split(":") for x in sys.argv[2].split())]
print("%.2f" % (max(d) / sum(d)) if sum(d) > 0 else "n/a")' "$1" "$2"
}

# Portage JVM warm-up (nginx and HAProxy need none; everyone still gets WARMUP before each run).
if (( PORTAGE_WARMUP > 0 )); then
  for path in $PATHS; do
    wrk -t"$THREADS" -c50 -d"${PORTAGE_WARMUP}s" -H "$(path_hdr "$path")" \
      "http://127.0.0.1:$(proxy_port portage "$path")$(path_url "$path")" >/dev/null 2>&1 || true
  done
fi

# measure PROXY PATH CONNS ROUND -> one result line in $tmp/results:
# path conns proxy rps p99ms proxy_cpu_s origin_cpu_s wrk_cpu_s t0 t1 requests round
measure() {
  local proxy=$1 path=$2 conns=$3 round=$4 port pid hdr url out
  port=$(proxy_port "$proxy" "$path"); pid=$(proxy_pid "$proxy" "$path")
  hdr=$(path_hdr "$path"); url="http://127.0.0.1:$port$(path_url "$path")"
  local args=(-t"$THREADS" -c"$conns" --latency -H "$hdr")
  wrk "${args[@]}" -d"${WARMUP}s" "$url" >/dev/null 2>&1 || true
  local p0 o0 p1 o1 t0 t1 perf_pid seg0 w0
  p0=$(cputicks "$pid"); o0=$(cputicks "${PID[origin]}"); t0=$(date +%s.%N)
  local perf=${PERF_STAT:-}; [[ -n $pid ]] || perf= # "direct": no proxy to count
  if [[ -n $perf ]]; then
    local all; all=$(family "$pid" | tr ' ' ,)
    read -r u0 s0 < <(cpusplit "$pid"); seg0=$(outsegs); read -r v0 n0 < <(switches "$pid"); w0=$(workerticks "${PID[origin]}")
    perf stat -e raw_syscalls:sys_enter,context-switches,cpu-migrations,page-faults -p "$all" -o "$tmp/perf-$proxy-$path-$conns.txt" \
      -- sleep "$DURATION" >/dev/null 2>&1 &
    perf_pid=$!
  fi
  # wrk in a subshell whose `times` reports the CPU of its child (wrk) on the last line
  out=$( (wrk "${args[@]}" -d"${DURATION}s" "$url"; times) )
  t1=$(date +%s.%N); p1=$(cputicks "$pid"); o1=$(cputicks "${PID[origin]}")
  [[ -n $perf ]] && wait "$perf_pid" && echo "$proxy $path $conns $(grep -o '[0-9,]* *\(raw_syscalls:sys_enter\|context-switches\|cpu-migrations\|page-faults\)' "$tmp/perf-$proxy-$path-$conns.txt" | tr -d , | awk '{printf "%s=%s ", $2, $1}') requests=$(grep -o '[0-9]* requests in' <<<"$out" | cut -d' ' -f1) $(read -r u1 s1 < <(cpusplit "$pid"); echo "user_ticks=$((u1 - u0)) system_ticks=$((s1 - s0))") $(read -r v1 n1 < <(switches "$pid"); echo "voluntary_switches=$((v1 - v0)) involuntary_switches=$((n1 - n0))") tcp_segments=$(($(outsegs) - seg0)) origin_busiest=$(busiest "$w0" "$(workerticks "${PID[origin]}")")" >>"$tmp/perf.txt"
  printf '## %s %s -c%s\n%s\n' "$proxy" "$path" "$conns" "$out" >>"$tmp/wrk.log"
  if grep -q "Non-2xx\|Socket errors" <<<"$out"; then echo "errors on $proxy $path -c$conns: $(grep 'Non-2xx\|Socket errors' <<<"$out")" >&2; fi
  python3 - "$out" "$proxy" "$path" "$conns" "$((p1 - p0))" "$((o1 - o0))" "$HZ" "$t0" "$t1" "$round" >>"$tmp/results" <<'PY'
import re, sys
out, proxy, path, conns, pt, ot, hz, t0, t1, rnd = sys.argv[1:]
def ms(v):
    n, u = re.match(r"([\d.]+)(\w+)", v).groups()
    return float(n) * {"us": 1e-3, "ms": 1.0, "s": 1e3, "m": 6e4}[u]
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
p99 = ms(re.search(r"^\s+99%\s+(\S+)", out, re.M).group(1))
reqs = int(re.search(r"(\d+) requests in", out).group(1))
def secs(s):
    m = re.match(r"(\d+)m([\d.]+)s", s)
    return int(m.group(1)) * 60 + float(m.group(2))
child = out.strip().splitlines()[-1].split()  # `times`: children's user and system time
wrk_cpu = secs(child[0]) + secs(child[1])
print(path, conns, proxy, "%.0f" % rps, "%.3f" % p99, "%.2f" % (int(pt) / int(hz)),
      "%.2f" % (int(ot) / int(hz)), "%.2f" % wrk_cpu, t0, t1, reqs, rnd)
PY
}

before=$(uptime)
echo "# l7-bench $(date -u +%FT%TZ) on $(nproc) cores"
echo "uptime before: $before"
echo "wrk -t$THREADS, ${WARMUP}s of warm-up then ${DURATION}s measured per proxy, path and concurrency, $ROUNDS round(s);"
echo "Portage JVMs: ${PORTAGE_WARMUP}s of wrk per path first; nginx $(nginx -v 2>&1 | sed 's/.*nginx\///'), HAProxy $(haproxy -v | head -1 | awk '{print $3}')"
for path in $PATHS; do
  for conns in $CONNS_LIST; do
    for (( round = 1; round <= ROUNDS; round++ )); do
      order=$PROXIES
      (( round % 2 == 0 )) && order=$(tr ' ' '\n' <<<"$PROXIES" | tac | tr '\n' ' ')
      for proxy in $order; do
        measure "$proxy" "$path" "$conns" "$round"
      done
    done
  done
done
after=$(uptime)

# Bytes allocated per request by each Portage JVM over each of its measured runs.
for jvm in sidecar hub; do
  "$java_home/bin/jcmd" "${PID[$jvm]}" JFR.dump name=alloc filename="$tmp/$jvm-alloc.jfr" >/dev/null 2>&1 || true
  "$java_home/bin/jfr" print --json --events jdk.ThreadAllocationStatistics "$tmp/$jvm-alloc.jfr" >"$tmp/$jvm-alloc.json" 2>/dev/null || true
  [[ -n ${PROFILE:-} ]] && "$java_home/bin/jcmd" "${PID[$jvm]}" JFR.dump name=profile filename="$tmp/$jvm-profile.jfr" >/dev/null 2>&1
done
python3 - "$tmp" "${CSV_DIR:-}" "$before" "$after" "$THREADS" "$DURATION" <<'PY'
import json, os, sys, datetime, collections, math
tmp, csv_dir, before, after, threads, duration = sys.argv[1:]
rows = [l.split() for l in open(f"{tmp}/results")]
def samples(jvm):  # thread id -> sorted [(epoch s, allocated bytes)]
    try:
        ev = json.load(open(f"{tmp}/{jvm}-alloc.json"))["recording"]["events"]
    except Exception:
        return None
    by = collections.defaultdict(list)
    for e in ev:
        v = e["values"]
        t = datetime.datetime.fromisoformat(v["startTime"].replace("Z", "+00:00")).timestamp()
        by[v["thread"]["javaThreadId"] if v.get("thread") else id(e)].append((t, v["allocated"]))
    for s in by.values():
        s.sort()
    return by
alloc = {"sidecar": samples("sidecar"), "hub": samples("hub")}
def allocated(by, t):  # bytes allocated by all threads up to time t (last sample at or before t)
    total = 0
    for s in by.values():
        last = 0
        for ts, a in s:
            if ts > t:
                break
            last = a
        total += last
    return total
def per_req(path, r):
    by = alloc.get(path)
    if not by:
        return "n/a"
    t0, t1, n = float(r[8]), float(r[9]), int(r[10])
    return "%.0f" % ((allocated(by, t1) - allocated(by, t0)) / n)
names = {"nginx": "nginx (auto: 2 workers)", "haproxy": "HAProxy (defaults)", "nginx-1w": "nginx, 1 worker (tuned)",
         "portage": None, "direct": "no proxy (wrk to the origin)"}
def display(path, proxy):  # the row name of a proxy on a path
    return names[proxy] or ("Portage sidecar" if path == "sidecar" else "Portage hub")
def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if len(xs) % 2 else (xs[len(xs) // 2 - 1] + xs[len(xs) // 2]) / 2
base = {(r[0], r[1], r[11]): r for r in rows if r[2] == "nginx"}  # nginx of the same round
def same_round(rs):  # each run of rs with nginx's run of the same round, where there is one
    return [(r, base[(r[0], r[1], r[11])]) for r in rs if (r[0], r[1], r[11]) in base]
def ratio(rs, col):  # median of the per-round ratios against nginx, with their range
    xs = [float(r[col]) / float(b[col]) for r, b in same_round(rs)]
    if not xs:
        return "n/a"
    if len(xs) == 1 or rs[0][2] == "nginx":
        return "%.2f" % xs[0]
    return "%.2f (%.2f–%.2f)" % (median(xs), min(xs), max(xs))
groups = collections.OrderedDict()  # (path, conns, proxy) -> its rounds, in the order measured
for r in rows:
    groups.setdefault((r[0], r[1], r[2]), []).append(r)
rounds = max(len(rs) for rs in groups.values())
summary = []  # path conns proxy rps p99: medians over the rounds, for the CSVs
print()
if rounds > 1:
    print(f"Medians of {rounds} rounds; ratios: median of the rounds' ratios against nginx in the same round (range).")
    print()
print("| path | conns | proxy | req/s | p99 ms | req/s vs nginx | p99 vs nginx | CPU s per 100k req: proxy / origin / wrk | bytes allocated per request |")
print("|---|---|---|---|---|---|---|---|---|")
for (path, conns, proxy), rs in groups.items():
    name = display(path, proxy)
    rps = median([float(r[3]) for r in rs])
    p99 = median([float(r[4]) for r in rs])
    summary.append([path, conns, proxy, "%.0f" % rps, "%.3f" % p99])
    cpu = " / ".join("–" if c == 5 and proxy == "direct" else  # no proxy process to count
                     "%.2f" % median([float(r[c]) * 1e5 / int(r[10]) for r in rs]) for c in (5, 6, 7))
    al = ""
    if proxy == "portage":
        per = [per_req(path, r) for r in rs]
        al = per[0] if "n/a" in per else "%.0f" % median([float(x) for x in per])
    print(f"| {path} | {conns} | {name} | {rps:.0f} | {p99:.3f} | {ratio(rs, 3)} | {ratio(rs, 4)} | {cpu} | {al} |")
wins = [(k, same_round(rs)) for k, rs in groups.items() if k[2] != "nginx" and same_round(rs)]
if rounds > 1 and wins:
    # One round's ratio moves with the host; how often a proxy wins its paired round shows whether
    # a median on either side of 1.0 is more than a coin toss (one-sided sign test).
    print()
    print("Rounds won against nginx in the same round (p99 at or under nginx's; req/s at or over nginx's),")
    print("with the chance of winning at least that many p99 rounds by coin tosses (one-sided sign test):")
    print()
    for (path, conns, proxy), paired in wins:
        n = len(paired)
        p99 = sum(1 for r, b in paired if float(r[4]) <= float(b[4]))
        rps = sum(1 for r, b in paired if float(r[3]) >= float(b[3]))
        chance = sum(math.comb(n, i) for i in range(p99, n + 1)) / 2 ** n
        name = display(path, proxy)
        print(f"- {path} -c{conns}, {name}: p99 {p99} of {n} (p = {chance:.3f}), req/s {rps} of {n}")
print()
print("uptime after: " + after)
if csv_dir:
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    load = "load %s -> %s" % (before.split("average:")[1].split(",")[0].strip(), after.split("average:")[1].split(",")[0].strip())
    order = ["portage", "nginx", "haproxy", "nginx-1w", "direct"]
    heads = {"portage": "Portage", "nginx": "nginx (2 workers)", "haproxy": "HAProxy", "nginx-1w": "nginx 1 worker",
             "direct": "no proxy"}
    rows = summary
    present = [p for p in order if any(r[2] == p for r in rows)]
    for metric, col, title, y, goal in (
        ("requests", 3, "req/s", "requests/s (higher is better)", "goal: Portage >= nginx"),
        ("p99", 4, "p99 latency", "p99 ms (lower is better)", "goal: Portage <= nginx at -c50, <= 1.2x at -c200")):
        with open(os.path.join(csv_dir, f"l7-defaults-{metric}.csv"), "w") as f:
            f.write(f"# title: L7 proxies at their defaults, one nginx origin: wrk -t{threads} {title}\n")
            med = f", medians of {rounds} rounds" if rounds > 1 else ""
            f.write(f"# y: {y}\n# note: {when}, {load}; {duration} s per run after warm-up{med}; {goal}\n")
            f.write("workload," + ",".join(heads[p] for p in present) + "\n")
            for (path, conns) in dict.fromkeys((r[0], r[1]) for r in rows):
                vals = {r[2]: r[col] for r in rows if r[0] == path and r[1] == conns}
                label = ("sidecar 1 KiB" if path == "sidecar" else "hub pod JSON") + f" -c{conns}"
                f.write(label + "," + ",".join(vals.get(p, "0") for p in present) + "\n")
PY
