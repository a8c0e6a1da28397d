# Sourced by the side-by-side load harnesses (proxy-bench.sh, hub-bench.sh, l7-bench.sh...): background processes
# that are all killed on exit, and a wait for their ports. The caller sets `tmp` (its private temp
# dir, removed on exit unless KEEP_TMP is set) and `pids=()` before sourcing this.

cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  sleep 0.5
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  [[ -n ${KEEP_TMP:-} ]] || rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

need() { # need COMMAND PACKAGE: stops at once, naming the Debian package, when COMMAND is missing
  command -v "$1" >/dev/null 2>&1 && return
  echo "$(basename "$0"): $1 not found (Debian: apt-get install $2)" >&2
  exit 1
}

bg() { # bg NAME CMD...: starts CMD in the background, logs to $tmp/NAME.log
  local name=$1; shift
  "$@" >"$tmp/$name.log" 2>&1 &
  pids+=($!)
}

wait_port() { # wait_port PORT: up to 60 s for a listener on 127.0.0.1:PORT
  local i
  for i in $(seq 1 600); do
    (exec 3<>/dev/tcp/127.0.0.1/"$1") 2>/dev/null && return 0
    sleep 0.1
  done
  echo "port $1 never opened; logs in $tmp" >&2; KEEP_TMP=1; exit 1
}

bench_service() { # bench_service DIR SERVICE_PORT ORIGIN_PORT: a Service "bench" (default namespace)
  # and its EndpointSlice (one ready endpoint, 127.0.0.1:ORIGIN_PORT) for the control plane's file source
  mkdir -p "$1"
  cat >"$1/bench.yaml" <<CP
apiVersion: v1
kind: Service
metadata: {name: bench, namespace: default}
spec:
  ports:
    - {name: http, protocol: TCP, port: $2, targetPort: $3}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: bench-1
  namespace: default
  labels: {kubernetes.io/service-name: bench}
addressType: IPv4
endpoints:
  - addresses: ["127.0.0.1"]
    conditions: {ready: true}
ports:
  - {name: http, protocol: TCP, port: $3}
CP
}

alloc_jfc() { # alloc_jfc FILE: JFR settings that record only jdk.ThreadAllocationStatistics, every 100 ms
  cat >"$1" <<'JFC'
<?xml version="1.0" encoding="UTF-8"?>
<configuration version="2.0" label="allocation counters">
  <event name="jdk.ThreadAllocationStatistics">
    <setting name="enabled">true</setting>
    <setting name="period">100 ms</setting>
  </event>
</configuration>
JFC
}
