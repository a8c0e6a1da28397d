#!/usr/bin/env python3
"""Syscalls and context switches per GiB of the tunnel relays during the measured single stream.

Run next to the tunnel bench, under the same lock, with the bench's stderr in a file:

    flock /tmp/portage-bench.lock bash -c 'bench/tunnel-bench.sh --idle 0 --dials 50 --warmup-dials 500 \
        --routes connect,ssh --bytes 1024 --warmup-mib 512 --jit-rounds 4 2>/tmp/tb.err & \
        bench/tunnel-relay-io.py /tmp/tb.err 1.0; wait'

It waits until the HTTP CONNECT route's JIT settle rounds end (the measured stream starts next), then
reads /proc/<pid>/io (syscr/syscw = read and write calls, rchar/wchar = their bytes), CPU and context
switches of the server and agent JVMs twice, SECONDS apart. The kernel's own counters: strace would slow
the relays and change the read sizes it measures. ROUTE=connect-tls measures the route with TLS on both hops
instead (run the bench with --routes connect-tls,...).
"""
import os, re, sys, time, subprocess
err, secs = sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 1.5
tls = os.environ.get("ROUTE", "connect") == "connect-tls"
route = "== Portage tunnel, HTTP CONNECT" + (", TLS both hops" if tls else "\n")
def pids():
    s = subprocess.run(["pgrep", "-f", "BenchChild server http-connect" + (".* tls=" if tls else "$")], capture_output=True, text=True).stdout.split()
    a = sorted(int(p) for p in subprocess.run(["pgrep", "-f", "BenchChild agent [0-9]+" + (" tls=" if tls else "$")], capture_output=True, text=True).stdout.split())
    return {"server": int(s[0]), "agent": a[0]}
def snap(pid):
    io = dict(l.split(": ") for l in open(f"/proc/{pid}/io").read().split("\n") if l)
    st = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    cs = [0, 0]
    for t in os.listdir(f"/proc/{pid}/task"):
        try:
            for l in open(f"/proc/{pid}/task/{t}/status"):
                if l.startswith("voluntary_ctxt_switches"): cs[0] += int(l.split()[1])
                if l.startswith("nonvoluntary_ctxt_switches"): cs[1] += int(l.split()[1])
        except OSError: pass
    return {k: int(v) for k, v in io.items()} | {"cpu": (int(st[11]) + int(st[12])) / os.sysconf("SC_CLK_TCK"), "vcs": cs[0], "ivcs": cs[1]}
while True:   # wait until the HTTP CONNECT route's JIT settled: the measured single stream starts next
    txt = open(err).read() if os.path.exists(err) else ""
    i = txt.find(route)
    if i >= 0:
        tail = txt[i:]
        if any(float(m) < 0.25 for m in re.findall(r"relays compiled for ([0-9.]+)", tail)) or "not settled" in tail: break
    time.sleep(0.05)
time.sleep(0.3)
p = pids(); a = {k: snap(v) for k, v in p.items()}
time.sleep(secs)
b = {k: snap(v) for k, v in p.items()}
for k in p:
    d = {x: b[k][x] - a[k][x] for x in a[k]}; gib = d["rchar"] / 2**30
    print(f"{k}: {d['rchar']/max(1,d['syscr'])/1024:.1f} KiB/read, {d['syscr']/gib:.0f} reads/GiB, "
          f"{d['wchar']/max(1,d['syscw'])/1024:.1f} KiB/write, {d['syscw']/gib:.0f} writes/GiB, "
          f"vol/invol ctx sw {d['vcs']/gib:.0f}/{d['ivcs']/gib:.0f} per GiB")
