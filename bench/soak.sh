#!/usr/bin/env bash
# Fault-injection soak of every Portage component on loopback (see docs/benchmarks-soak.md).
# Runs the real runnable jar (cli/target/portage.jar) as child processes, drives steady load through
# each of them, kills and restarts agent, server replica and control plane and stops the hub's
# upstream at seeded random times, samples RSS/threads/fds every 5 s, prints a Markdown report and
# exits 1 on a checksum failure, leak, crash or component that never came back (2: setup failed).
#   bench/soak.sh                       # 5 minutes, report written to docs/bench-results/soak-latest.md
#   bench/soak.sh --duration 30s        # smoke run; shorter than 2 minutes: stdout only
#   bench/soak.sh --seed 42 --workers 8 --churn-interval 3s --heap 256m --work-dir DIR --label TEXT
#   bench/soak.sh --no-report           # print the report only (--no-append: the same)
set -euo pipefail

root=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)
portage_jar="$root/cli/target/portage.jar"
bench_jar="$root/bench/target/benchmarks.jar"

die() { echo "soak: $*" >&2; exit 2; }

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
java_home=$(dirname "$(dirname "$(readlink -f "$java")")")

duration=5m report=1 args=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --duration) duration=$2; shift 2 ;;
    --no-report|--no-append) report=0; shift ;;
    *) args+=("$1"); shift ;;
  esac
done

stale() { # stale JAR DIRS...: JAR missing or older than any source under DIRS
  local jar=$1; shift
  [[ ! -f $jar ]] || [[ -n $(find "$@" -type f -newer "$jar" -print -quit 2>/dev/null) ]]
}
build() { # build MODULE: the module and what it needs, through the reactor (never mvn install)
  echo "soak: building $1 (jar missing or older than its sources)" >&2
  (cd "$root" && { JAVA_HOME="$java_home" mvn -B -q -ntp -o -pl "$1" -am package -DskipTests >&2 \
    || JAVA_HOME="$java_home" mvn -B -q -ntp -pl "$1" -am package -DskipTests >&2; }) \
    || die "build failed; run 'mvn -B -pl $1 -am package -DskipTests' in $root to see why"
}
srcs=("$root"/{api,core,tunnel,control,hub,proxy}/src/main "$root"/{api,core,tunnel,control,hub,proxy}/pom.xml)
stale "$portage_jar" "${srcs[@]}" "$root/cli/src/main" "$root/cli/pom.xml" && build cli
stale "$bench_jar" "$root"/{api,core,tunnel,control}/src/main "$root/bench/src/main" "$root/bench/pom.xml" && build bench

# Runs of 2 minutes or more are recorded; shorter (smoke) runs only print.
secs=$(python3 -c 'import re,sys; m=re.fullmatch(r"(?:(\d+)m)?(?:(\d+)s)?", sys.argv[1]); print(int(m.group(1) or 0)*60+int(m.group(2) or 0) if m else 0)' "$duration" 2>/dev/null || echo 0)
if [[ $report == 1 && $secs -ge 120 ]]; then
  args+=(--report-to "$root/docs/bench-results/soak-latest.md")
fi
commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
has_label=0
for a in "${args[@]}"; do [[ $a == --label ]] && has_label=1; done
[[ $has_label == 1 ]] || args+=(--label "commit $commit")

exec "$java" -Xmx1g -Djdk.httpclient.allowRestrictedHeaders=host --enable-native-access=ALL-UNNAMED \
  -cp "$bench_jar" dev.portage.bench.soak.Soak --jar "$portage_jar" --duration "$duration" "${args[@]}"
