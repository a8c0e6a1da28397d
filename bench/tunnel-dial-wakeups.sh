#!/usr/bin/env bash
# Thread wake-ups and CPU per HTTP CONNECT dial (see docs/benchmarks-tunnel.md): starts the bench
# backend, a Portage server (--mode http-connect) and an agent, one JVM each, from
# bench/target/benchmarks.jar (build it with bench/tunnel-bench.sh or `mvn -pl bench -am package`),
# warms the dial path up, then runs N sequential CONNECT + 1-byte echo dials from a python client and
# prints, per process and thread name, the context switches (voluntary/involuntary) and CPU ms per
# dial, then the same client's direct-TCP latency. Usage: bench/tunnel-dial-wakeups.sh [N=3000]
# Run under `flock /tmp/portage-bench.lock` on a shared machine.
set -euo pipefail
root=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)
jar=${BENCH_JAR:-$root/bench/target/benchmarks.jar}
n=${1:-3000}
[[ -f $jar ]] || { echo "tunnel-dial-wakeups: $jar missing (run bench/tunnel-bench.sh once)" >&2; exit 1; }
java=${JAVA:-$(ls -d /usr/lib/jvm/*25*/bin/java 2>/dev/null | head -1)}
java=${java:-java}
tmp=$(mktemp -d /tmp/tunnel-wakeups.XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$tmp"; }
trap cleanup EXIT

child() { # name args... : starts a BenchChild, its stdout readable on fd_<name>
  mkfifo "$tmp/$1.out" "$tmp/$1.in"
  exec {keep}<>"$tmp/$1.in" # stdin stays open (its EOF ends a BenchChild) until this script exits
  "$java" -Xmx1g -XX:+UseG1GC --enable-native-access=ALL-UNNAMED -cp "$jar" \
    dev.portage.bench.tunnel.BenchChild "${@:2}" >"$tmp/$1.out" 2>"$tmp/$1.log" <"$tmp/$1.in" &
  pids+=($!)
  eval "pid_$1=$!"
  exec {fd}<"$tmp/$1.out"
  eval "fd_$1=$fd"
}
value() { local line; read -r line <&"$1"; echo "${line##* }"; }

child backend backend;              bport=$(value "$fd_backend")
child server server http-connect;   aport=$(value "$fd_server"); sport=$(value "$fd_server")
child agent agent "$aport";         value "$fd_agent" >/dev/null

python3 - "$sport" "$bport" "$n" "$pid_backend" "$pid_server" "$pid_agent" <<'PY'
import os, socket, sys, time
sport, bport, n = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
pids = {"backend": sys.argv[4], "server": sys.argv[5], "agent": sys.argv[6]}
target = "127.0.0.1:%d" % bport

def dial(port, connect):
    t0 = time.perf_counter_ns()
    s = socket.socket(); s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.connect(("127.0.0.1", port))
    if connect:
        s.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (target, target)).encode())
        head = b""
        while not head.endswith(b"\r\n\r\n"):
            c = s.recv(1)
            if not c: raise IOError("CONNECT closed: %r" % head)
            head += c
        if not head.startswith(b"HTTP/1.1 200"): raise IOError(head)
    s.sendall(b"E*")
    if s.recv(1) != b"*": raise SystemExit("echo failed")
    t = time.perf_counter_ns() - t0
    s.close()
    return t

def snap():
    out = {}
    for role, pid in pids.items():
        for t in os.listdir("/proc/%s/task" % pid):
            try:
                st = dict(l.split(":\t", 1) for l in open("/proc/%s/task/%s/status" % (pid, t)).read().split("\n") if ":\t" in l)
                stat = open("/proc/%s/task/%s/stat" % (pid, t)).read(); f = stat[stat.rindex(")") + 2:].split()
                out[(role, t)] = (st["Name"].strip(), int(st["voluntary_ctxt_switches"]),
                                  int(st["nonvoluntary_ctxt_switches"]), int(f[11]) + int(f[12]))
            except (OSError, KeyError, ValueError):
                pass
    return out

def pct(l, q):
    return l[min(len(l) - 1, max(0, -(-len(l) * q // 1000) - 1))] / 1e6

for i in range(300):  # the agent connects on its own schedule
    try:
        dial(sport, True); break
    except (OSError, IOError) as e:
        if i == 299: raise
        time.sleep(0.1)
for _ in range(n):
    dial(sport, True)  # warm-up: the dial path's JIT
load = open("/proc/loadavg").read().split()[:3]
a = snap(); lat = sorted(dial(sport, True) for _ in range(n)); b = snap()
print("load %s; %d HTTP CONNECT dials: p50 %.3f p99 %.3f p99.9 %.3f max %.3f ms" % (" ".join(load), n, pct(lat, 500), pct(lat, 990), pct(lat, 999), lat[-1] / 1e6))
agg = {}
for k, (name, vol, inv, cpu) in b.items():
    o = a.get(k, (name, 0, 0, 0)); s = agg.setdefault((k[0], name), [0, 0, 0])
    s[0] += vol - o[1]; s[1] += inv - o[2]; s[2] += cpu - o[3]
hz = os.sysconf("SC_CLK_TCK")
print("%-8s %-16s %10s %10s %12s" % ("process", "thread", "vol/dial", "invol/dial", "CPU ms/dial"))
for (role, name), (vol, inv, cpu) in sorted(agg.items()):
    if vol + inv >= n // 50 or cpu > 0:
        print("%-8s %-16s %10.2f %10.2f %12.3f" % (role, name, vol / n, inv / n, cpu * 1000.0 / hz / n))
lat = sorted(dial(bport, False) for _ in range(n))
print("direct TCP, same client: p50 %.3f p99 %.3f p99.9 %.3f max %.3f ms; load %s" % (pct(lat, 500), pct(lat, 990), pct(lat, 999), lat[-1] / 1e6, " ".join(open("/proc/loadavg").read().split()[:3])))
PY
