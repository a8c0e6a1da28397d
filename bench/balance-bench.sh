#!/usr/bin/env bash
# Balancing benchmark (issue #5; see docs/benchmarks-proxy.md): 10 in-process HTTP backends behind a
# real Portage sidecar fed by a real control plane, one backend slowed 10x for the second half of the
# measured window; fixed-rate open-loop load; round-robin versus P2C peak-EWMA.
# Builds bench/target/benchmarks.jar when it is missing or older than the sources, then runs
# dev.portage.bench.balance.BalanceBenchmark and prints its Markdown report on stdout.
# Extra arguments go to the harness: --rate 300 --duration 30 --warmup 5 --jit-warmup 15 --backends 10 --delay-ms 50
# --slow-factor 10 --connections 128 --runs healthy-p2c,slowed-rr,slowed-p2c
set -euo pipefail

root=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)
jar="$root/bench/target/benchmarks.jar"

die() { echo "balance-bench: $*" >&2; exit 1; }

find_java() {
  local c v
  for c in ${JAVA_HOME:+"$JAVA_HOME/bin/java"} /usr/lib/jvm/*/bin/java "$(command -v java || true)"; do
    [[ -x $c ]] || continue
    v=$("$c" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')
    if [[ ${v%%.*} -ge 21 ]]; then echo "$c"; return; fi
  done
  die "no JDK 21+ found (set JAVA_HOME)"
}
java=$(find_java)

if [[ ! -f $jar ]] || [[ -n $(find "$root"/{core,api,control,proxy,tunnel,bench}/src "$root/bench/pom.xml" -newer "$jar" -type f -print -quit) ]]; then
  echo "balance-bench: building $jar" >&2
  (cd "$root" && mvn -B -q -pl bench -am package -DskipTests) >&2
fi

tmp=$(mktemp -d /tmp/balance-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# Warnings only, on stderr: stdout is the report.
cat >"$tmp/logback.xml" <<'XML'
<configuration>
  <appender name="err" class="ch.qos.logback.core.ConsoleAppender">
    <target>System.err</target>
    <encoder><pattern>%d{HH:mm:ss.SSS} %-5level %logger{30} - %msg%n</pattern></encoder>
  </appender>
  <root level="WARN"><appender-ref ref="err"/></root>
</configuration>
XML

# BENCH_JAVA_OPTS: extra JVM flags (e.g. -Xlog:gc to see pauses).
# shellcheck disable=SC2086
"$java" -Xmx1g ${BENCH_JAVA_OPTS:-} --enable-native-access=ALL-UNNAMED -Dlogback.configurationFile="$tmp/logback.xml" \
  -cp "$jar" dev.portage.bench.balance.BalanceBenchmark "$@"
